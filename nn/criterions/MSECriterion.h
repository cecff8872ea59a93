// nn::MSECriterion: loss = sum (input - target)^2, divided by the number of elements when
// sizeAverage (Torch7's MSECriterion); the formula is math::loss::Mse.
#pragma once

#include "nn/criterions/PointwiseCriterion.h"

namespace nn {

class MSECriterion : public PointwiseCriterion {
 public:
  explicit MSECriterion(bool sizeAverage = true) : PointwiseCriterion(Entry::of<math::loss::Mse>(), sizeAverage) {}
  std::string toString() const override { return "nn.MSECriterion"; }
};

}  // namespace nn
