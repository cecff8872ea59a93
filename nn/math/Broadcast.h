// Broadcasting, shared by the CPU loops and the CUDA kernels: a parameter applied to every
// element of an input it is broadcast against (CMul, Mul, Add), and sums over the dimensions
// it was broadcast along (their parameter gradients, Sum, Mean). Positions go through
// StridedViews (nn/math/StridedView.h): element e of a view, counted in row-major order,
// lies at stridedOffset(view, e).
#pragma once

#include <stdint.h>

#include "nn/math/HostDevice.h"
#include "nn/math/StridedView.h"

namespace nn::math {

/// Where element e of v (counted in row-major order) lies, in floats from v's first element.
NN_HD inline int64_t stridedOffset(const StridedView& v, int64_t e) {
  int64_t offset = 0;
  for (int d = v.dims - 1; d >= 0; --d) {
    offset += e % v.sizes[d] * v.strides[d];
    e /= v.sizes[d];
  }
  return offset;
}

/// kMultiply: x p; kAdd: x + p. PReLU's, with p the slope: kPReLU: x where x > 0, else p x;
/// kPReLUSlope: its derivative, 1 where x > 0, else p; kNegativePart: 0 where x > 0, else x
/// (the factor of the slope's gradient).
enum class BroadcastOp { kMultiply, kAdd, kPReLU, kPReLUSlope, kNegativePart };

/// One element.
NN_HD inline float broadcastApply(BroadcastOp op, float x, float p) {
  switch (op) {
    case BroadcastOp::kMultiply:
      return x * p;
    case BroadcastOp::kAdd:
      return x + p;
    case BroadcastOp::kPReLU:
      return x > 0.f ? x : p * x;
    case BroadcastOp::kPReLUSlope:
      return x > 0.f ? 1.f : p;
    case BroadcastOp::kNegativePart:
      return x > 0.f ? 0.f : x;
  }
  return x;
}

/// The sum over the k elements r of `reduced` of x[i] * g[i] (g[i] where x is null), i = base +
/// stridedOffset(reduced, r): each product rounded to float, the sum in double in row-major
/// order of r, then rounded.
NN_HD inline float broadcastSum(const float* x, const float* g, int64_t base, const StridedView& reduced, int64_t k) {
  double sum = 0;
  for (int64_t r = 0; r < k; ++r) {
    const int64_t i = base + stridedOffset(reduced, r);
    sum += x ? x[i] * g[i] : g[i];
  }
  return static_cast<float>(sum);
}

/// The largest of the k elements r of `reduced` from `base` (Max): its value and its r, the
/// first of equal maxima; NaN wins over anything, the first NaN (PyTorch's max).
NN_HD inline float broadcastMax(const float* x, int64_t base, const StridedView& reduced, int64_t k, int64_t* at) {
  float best = x[base];
  int64_t bestAt = 0;
  for (int64_t r = 1; r < k && best == best; ++r) {
    const float v = x[base + stridedOffset(reduced, r)];
    if (v > best || v != v) {
      best = v;
      bestAt = r;
    }
  }
  *at = bestAt;
  return best;
}

/// Output j of a sum over the broadcast dimensions (BroadcastKernels::reduce): out[j] = scale *
/// broadcastSum over the elements gathered at stridedOffset(base, j), added to out[j] when
/// accumulating (a gradient), out[j] not read otherwise.
NN_HD inline void broadcastReduceAt(const float* x, const float* g, const StridedView& base, const StridedView& reduced,
                                    int64_t k, int64_t j, float scale, bool accumulate, float* out) {
  const float sum = scale * broadcastSum(x, g, stridedOffset(base, j), reduced, k);
  out[j] = accumulate ? out[j] + sum : sum;
}

/// Output j of Max (BroadcastKernels::max): the value and, as a float, its position r.
NN_HD inline void broadcastMaxAt(const float* x, const StridedView& base, const StridedView& reduced, int64_t k,
                                 int64_t j, float* out, float* indices) {
  int64_t at = 0;
  out[j] = broadcastMax(x, stridedOffset(base, j), reduced, k, &at);
  indices[j] = static_cast<float>(at);
}

/// Max's gradient of output j: gradOutput j to the input element it chose (the rest of gradIn
/// is zero).
NN_HD inline void broadcastMaxGradientAt(const float* g, const float* indices, const StridedView& base,
                                         const StridedView& reduced, int64_t j, float* gradIn) {
  gradIn[stridedOffset(base, j) + stridedOffset(reduced, static_cast<int64_t>(indices[j]))] = g[j];
}

}  // namespace nn::math
