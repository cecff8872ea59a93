// nn::SmoothL1Criterion: loss = sum of 0.5 d^2 where |d| < 1 and |d| - 0.5 elsewhere, d = input -
// target, divided by the number of elements when sizeAverage (Torch7's SmoothL1Criterion,
// PyTorch's smooth_l1_loss with beta 1); the formula is math::loss::SmoothL1.
#pragma once

#include "nn/criterions/PointwiseCriterion.h"

namespace nn {

/// Torch7's nn.SmoothL1Criterion (PyTorch's SmoothL1Loss, beta 1): the Huber loss of input - target.
class SmoothL1Criterion : public PointwiseCriterion {
 public:
  /// sizeAverage: divide the sum by the number of elements (the default) or not.
  explicit SmoothL1Criterion(bool sizeAverage = true)
      : PointwiseCriterion(Entry::of<math::loss::SmoothL1>(), sizeAverage) {}
  std::string toString() const override { return "nn.SmoothL1Criterion"; }
};

}  // namespace nn
