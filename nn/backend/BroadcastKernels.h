// BroadcastKernels: a parameter broadcast against an input, and sums over the broadcast
// dimensions, on one device type (nn/math/Broadcast.h): the work of CMul, Mul, Add, Sum and
// Mean. The views come from nn/modules/BroadcastShape.h; the CPU table is in nn/cpu, the CUDA table in
// nn/cuda.
#pragma once

#include <cstdint>

#include "nn/math/Broadcast.h"
#include "nn/tensor/Device.h"

namespace nn {

/// The broadcasting passes on one device type, over strided views of contiguous arrays: n or m elements, each
/// reduced output j gathering k elements at stridedOffset(base, j) + stridedOffset(reduced, r), r < k.
struct BroadcastKernels {
  /// y[e] = math::broadcastApply(op, x[e], p[stridedOffset(pView, e)]) for e < n; y may be x.
  void (*apply)(const Device& device, math::BroadcastOp op, const float* x, const float* p, const StridedView& pView,
                float* y, int64_t n);
  /// math::broadcastReduceAt for j < m.
  void (*reduce)(const Device& device, const float* x, const float* g, const StridedView& base, int64_t m,
                 const StridedView& reduced, int64_t k, float* out, float scale, bool accumulate);
  /// math::broadcastMaxAt for j < m.
  void (*max)(const Device& device, const float* x, const StridedView& base, int64_t m, const StridedView& reduced,
              int64_t k, float* out, float* indices);
  /// gradIn (n elements) = 0 but at each j's chosen element (math::broadcastMaxGradientAt).
  void (*maxGradient)(const Device& device, const float* g, const float* indices, const StridedView& base, int64_t m,
                      const StridedView& reduced, float* gradIn, int64_t n);
};

}  // namespace nn
