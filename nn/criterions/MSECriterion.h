// nn::MSECriterion: loss = sum (input - target)^2, divided by the number of elements when
// sizeAverage (Torch7's MSECriterion); the formula is math::loss::Mse.
#pragma once

#include "nn/criterions/PointwiseCriterion.h"

namespace nn {

/// Torch7's nn.MSECriterion (PyTorch's MSELoss): the mean (or sum) squared difference.
class MSECriterion : public PointwiseCriterion {
 public:
  /// sizeAverage: divide the sum by the number of elements (the default) or not.
  explicit MSECriterion(bool sizeAverage = true) : PointwiseCriterion(Entry::of<math::loss::Mse>(), sizeAverage) {}
  std::string toString() const override { return "nn.MSECriterion"; }
};

}  // namespace nn
