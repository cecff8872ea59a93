// The CPU table of ConcatKernels.
#include <algorithm>

#include "nn/cpu/Tables.h"

namespace nn::cpu {

namespace {

void cpuCopyRuns(const Device&, float* dst, int64_t dstStride, const float* src, int64_t srcStride, int64_t runs,
                 int64_t length) {
  for (int64_t r = 0; r < runs; ++r) std::copy(src + r * srcStride, src + r * srcStride + length, dst + r * dstStride);
}

}  // namespace

ConcatKernels concatKernels() {
  ConcatKernels k{};
  k.copyRuns = &cpuCopyRuns;
  return k;
}

}  // namespace nn::cpu
