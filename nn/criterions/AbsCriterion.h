// nn::AbsCriterion: loss = sum |input - target|, divided by the number of elements when
// sizeAverage (Torch7's AbsCriterion); the formula is math::loss::Abs (gradient 0 where
// input == target, as PyTorch's l1_loss).
#pragma once

#include "nn/criterions/PointwiseCriterion.h"

namespace nn {

class AbsCriterion : public PointwiseCriterion {
 public:
  explicit AbsCriterion(bool sizeAverage = true) : PointwiseCriterion(Entry::of<math::loss::Abs>(), sizeAverage) {}
  std::string toString() const override { return "nn.AbsCriterion"; }
};

}  // namespace nn
