// Torch7's MultiMarginCriterion (PyTorch's multi_margin_loss), shared by the CPU loops and the
// CUDA kernels: for a row x of C class scores with target y, the loss is
// sum_{j != y} w_y h(margin - x_y + x_j) / C, with h(z) = z (p = 1) or z^2 (p = 2) where z > 0,
// else 0; w_y is the target's weight (1 without weights).
#pragma once

#include <stdint.h>

#include "nn/math/HostDevice.h"

namespace nn::math {

/// h(z) for p 1 or 2.
NN_HD inline float multiMarginTerm(float z, int p) { return z > 0.f ? (p == 1 ? z : z * z) : 0.f; }

/// h'(z).
NN_HD inline float multiMarginDerivative(float z, int p) { return z > 0.f ? (p == 1 ? 1.f : 2.f * z) : 0.f; }

/// The weight of class y: weights[y], 1 without weights.
NN_HD inline float multiMarginWeight(const float* weights, int64_t y) { return weights ? weights[y] : 1.f; }

/// One row's loss, its terms summed in class order in double.
NN_HD inline double multiMarginRowLoss(const float* row, int64_t classes, int64_t y, float margin, int p,
                                       const float* weights) {
  const float weight = multiMarginWeight(weights, y);
  double sum = 0;
  for (int64_t j = 0; j < classes; ++j)
    if (j != y) sum += weight * multiMarginTerm(margin - row[y] + row[j], p);
  return sum / static_cast<double>(classes);
}

/// One row's gradient into g: g_j = norm w_y h'(z_j) for j != y, and g_y = -sum_j g_j, where
/// norm is 1 / C, or 1 / (batch C) when averaged (PyTorch's order of operations).
NN_HD inline void multiMarginRowGradient(const float* row, int64_t classes, int64_t y, float margin, int p,
                                         const float* weights, float norm, float* g) {
  const float weight = multiMarginWeight(weights, y);
  float target = 0.f;
  for (int64_t j = 0; j < classes; ++j) {
    if (j == y) continue;
    g[j] = norm * multiMarginDerivative(margin - row[y] + row[j], p) * weight;
    target -= g[j];
  }
  g[y] = target;
}

/// norm for the gradient: 1 / (batch C) averaged, 1 / C otherwise, in double then rounded.
NN_HD inline float multiMarginNorm(int64_t batch, int64_t classes, bool sizeAverage) {
  return static_cast<float>(1.0 / (static_cast<double>(sizeAverage ? batch : 1) * static_cast<double>(classes)));
}

}  // namespace nn::math
