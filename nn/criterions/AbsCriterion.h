// nn::AbsCriterion: loss = sum |input - target|, divided by the number of elements when
// sizeAverage (Torch7's AbsCriterion); the formula is math::loss::Abs (gradient 0 where
// input == target, as PyTorch's l1_loss).
#pragma once

#include "nn/criterions/PointwiseCriterion.h"

namespace nn {

/// Torch7's nn.AbsCriterion (PyTorch's L1Loss): the mean (or sum) absolute difference.
class AbsCriterion : public PointwiseCriterion {
 public:
  /// sizeAverage: divide the sum by the number of elements (the default) or not.
  explicit AbsCriterion(bool sizeAverage = true) : PointwiseCriterion(Entry::of<math::loss::Abs>(), sizeAverage) {}
  std::string toString() const override { return "nn.AbsCriterion"; }
};

}  // namespace nn
