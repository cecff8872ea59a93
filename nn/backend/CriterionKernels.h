// CriterionKernels: the work of the criterions (nn::ClassNLLCriterion, nn::CrossEntropyCriterion,
// nn::MultiMarginCriterion and the point-wise ones) on one device type, over contiguous raw
// arrays: scores x [batch, classes] with class targets [batch] (indices from 0 as floats,
// already checked), or input and target of n elements. A loss is written to one float in the
// device's memory. The CPU table is in nn/cpu, the CUDA table in nn/cuda; see
// nn/backend/Backend.h.
#pragma once

#include <array>
#include <cstdint>

#include "nn/math/PointwiseLoss.h"
#include "nn/tensor/Device.h"

namespace nn {

/// One point-wise loss over n elements of input x and target t; weights, where not null, are
/// `period` floats, element i taking weights[i % period].
struct PointwiseLossKernels {
  /// *loss = sum_i w_i term(x_i, t_i), divided by n where sizeAverage.
  void (*loss)(const Device& device, const float* x, const float* target, const float* weights, int64_t period,
               int64_t n, bool sizeAverage, float* loss);
  /// gradIn_i = gradient(x_i, t_i) norm w_i, norm 1 / n where sizeAverage, else 1.
  void (*gradient)(const Device& device, const float* x, const float* target, const float* weights, int64_t period,
                   float* gradIn, int64_t n, bool sizeAverage);
};

/// The criterions' passes on one device type: each loss written to one float in the device's memory, each
/// gradient overwriting gradIn, the input's shape.
struct CriterionKernels {
  /// *loss = -sum_i x[i][t_i], divided by batch where sizeAverage.
  void (*classNllLoss)(const Device& device, const float* x, const float* target, int64_t batch, int64_t classes,
                       bool sizeAverage, float* loss);
  /// gradIn [batch, classes]: -1 (or -1 / batch) at each row's target, 0 elsewhere.
  void (*classNllGradient)(const Device& device, const float* target, float* gradIn, int64_t batch, int64_t classes,
                           bool sizeAverage);
  /// *loss = sum_i log(sum_j exp(x[i][j])) - x[i][t_i], divided by batch where sizeAverage.
  void (*crossEntropyLoss)(const Device& device, const float* x, const float* target, int64_t batch, int64_t classes,
                           bool sizeAverage, float* loss);
  /// gradIn = softmax(x) - onehot(t), per row, divided by batch where sizeAverage.
  void (*crossEntropyGradient)(const Device& device, const float* x, const float* target, float* gradIn, int64_t batch,
                               int64_t classes, bool sizeAverage);
  /// Torch7's MultiMarginCriterion over scores x [batch, classes] and class targets; weights
  /// [classes] or null: *loss = sum of the rows' losses (nn/math/MultiMargin.h), divided by batch
  /// where sizeAverage.
  void (*multiMarginLoss)(const Device& device, const float* x, const float* target, const float* weights,
                          int64_t batch, int64_t classes, int p, float margin, bool sizeAverage, float* loss);
  /// gradIn [batch, classes]: each row's math::multiMarginRowGradient, with norm 1 / classes, or
  /// 1 / (batch * classes) where sizeAverage (math::multiMarginNorm).
  void (*multiMarginGradient)(const Device& device, const float* x, const float* target, const float* weights,
                              float* gradIn, int64_t batch, int64_t classes, int p, float margin, bool sizeAverage);
  /// The passes of each point-wise loss of nn/math/PointwiseLoss.h's All, in its order: a
  /// backend builds the list from All, and loss L's entry is pointwise[math::loss::indexOf<L>()].
  std::array<PointwiseLossKernels, math::loss::All::kCount> pointwise;
};

}  // namespace nn
