// The reductions of the criterions, shared by the CPU loops and the CUDA kernels: the loss is
// a sum of per-element terms, accumulated in double and divided by their count when averaged.
#pragma once

#include <stdint.h>

#include "nn/math/HostDevice.h"

namespace nn::math {

/// The loss from the double sum of its `count` terms.
NN_HD inline float averageLoss(double total, int64_t count, bool sizeAverage) {
  return static_cast<float>(sizeAverage ? total / static_cast<double>(count) : total);
}

/// The factor of each term's gradient: 1 / count when the loss is averaged, else 1.
NN_HD inline float lossNorm(int64_t count, bool sizeAverage) {
  return sizeAverage ? 1.f / static_cast<float>(count) : 1.f;
}

/// ClassNLL's gradient at the target of a row: d(-x_t)/dx_t times the norm.
NN_HD inline float classNllGradient(float norm) { return -norm; }

}  // namespace nn::math
