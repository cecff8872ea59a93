// The CPU table of BroadcastKernels: the elements, or the sums, cut into parts, one per compute
// thread of the device (nn/runtime/ComputeThreads.h); each element's work is nn/math/Broadcast.h's.
#include <algorithm>

#include "nn/cpu/Tables.h"
#include "nn/math/Broadcast.h"
#include "nn/runtime/ComputeThreads.h"

namespace nn::cpu {

namespace {

// Elements per part of the element-wise loop; each sum is a part of its own.
constexpr int64_t kGrain = 16384;

void cpuApply(const Device& device, math::BroadcastOp op, const float* x, const float* p, const StridedView& pView,
              float* y, int64_t n) {
  parallelRanges(device, n, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) y[e] = math::broadcastApply(op, x[e], p[math::stridedOffset(pView, e)]);
  });
}

void cpuReduce(const Device& device, const float* x, const float* g, const StridedView& base, int64_t m,
               const StridedView& reduced, int64_t k, float* out, float scale, bool accumulate) {
  parallelRanges(device, m, 1, [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) math::broadcastReduceAt(x, g, base, reduced, k, j, scale, accumulate, out);
  });
}

void cpuMax(const Device& device, const float* x, const StridedView& base, int64_t m, const StridedView& reduced,
            int64_t k, float* out, float* indices) {
  parallelRanges(device, m, 1, [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) math::broadcastMaxAt(x, base, reduced, k, j, out, indices);
  });
}

void cpuMaxGradient(const Device&, const float* g, const float* indices, const StridedView& base, int64_t m,
                    const StridedView& reduced, float* gradIn, int64_t n) {
  std::fill_n(gradIn, n, 0.f);
  for (int64_t j = 0; j < m; ++j) math::broadcastMaxGradientAt(g, indices, base, reduced, j, gradIn);
}

}  // namespace

BroadcastKernels broadcastKernels() {
  BroadcastKernels k{};
  k.apply = &cpuApply;
  k.reduce = &cpuReduce;
  k.max = &cpuMax;
  k.maxGradient = &cpuMaxGradient;
  return k;
}

}  // namespace nn::cpu
