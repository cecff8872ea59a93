// Mean squared error (Torch7's MSECriterion): loss = norm * sum_i (x_i - t_i)^2 with norm
// 1 / n when averaged over the n elements, 1 otherwise.
#pragma once

#include "nn/HostDevice.h"

namespace nn::math {

/// One term of the sum: (x - t)^2.
NN_HD inline float mseTerm(float x, float t) {
  const float d = x - t;
  return d * d;
}

/// d loss / d x = 2 * norm * (x - t).
NN_HD inline float mseGradient(float x, float t, float norm) { return 2.f * norm * (x - t); }

}  // namespace nn::math
