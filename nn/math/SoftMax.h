// Softmax and log-softmax formulas, shared by the CPU loops and the CUDA kernels.
//
// The input is seen as [outer, classes, inner] (SoftMaxShape): each of the outer * inner
// columns of `classes` values, `inner` apart, is normalised on its own. The loops find each
// column's max m and sum s = sum_c exp(x_c - m), then call the functions below. Subtracting
// the max keeps every exp in (0, 1], so large inputs cannot overflow.
#pragma once

#include <math.h>  // expf, logf: the float functions of both the host and nvcc device code
#include <stdint.h>

#include "nn/math/HostDevice.h"

namespace nn::math {

/// The input seen as [outer, classes, inner]; the softmax runs over `classes`.
struct SoftMaxShape {
  /// The product of the sizes before the class dimension (the batch of a [N, C] or [N, C, H, W] input).
  int64_t outer = 0;
  /// The size of the class dimension, which each softmax runs over.
  int64_t classes = 0;
  /// The product of the sizes after it (H * W of an image), 1 for none: a column's classes lie `inner` floats apart.
  int64_t inner = 0;
};

/// Torch7's choice of dimension: the last one of a 1-D [C] or 2-D [N, C] input, dimension 0
/// of a 3-D [C, H, W] and dimension 1 of a 4-D [N, C, H, W] input. False for other ranks.
NN_HD inline bool softMaxShape(int dims, const int64_t* sizes, SoftMaxShape* shape) {
  switch (dims) {
    case 1:
      *shape = {1, sizes[0], 1};
      return true;
    case 2:
      *shape = {sizes[0], sizes[1], 1};
      return true;
    case 3:
      *shape = {1, sizes[0], sizes[1] * sizes[2]};
      return true;
    case 4:
      *shape = {sizes[0], sizes[1], sizes[2] * sizes[3]};
      return true;
    default:
      return false;
  }
}

/// exp(x - max): one term of the column's sum, and the softmax output before normalising.
NN_HD inline float softMaxExp(float x, float max) { return expf(x - max); }
/// softmax(x)_c = exp(x_c - max) / sum.
NN_HD inline float softMaxOutput(float shiftedExp, float sum) { return shiftedExp / sum; }
/// dL/dx_c = y_c (g_c - sum_k g_k y_k), with y the softmax output and dot = sum_k g_k y_k.
NN_HD inline float softMaxBackward(float y, float gradOutput, float dot) { return y * (gradOutput - dot); }

/// logsoftmax(x)_c = (x_c - max) - log(sum). Subtracting the max first keeps the digits of a
/// large x_c that x_c - (max + log(sum)) would round away.
NN_HD inline float logSoftMaxOutput(float x, float max, float logSum) { return (x - max) - logSum; }
/// dL/dx_c = g_c - exp(y_c) sum_k g_k, with y the log-softmax output and gradSum = sum_k g_k.
NN_HD inline float logSoftMaxBackward(float y, float gradOutput, float gradSum) {
  return gradOutput - expf(y) * gradSum;
}

}  // namespace nn::math
