// nn::BCECriterion: binary cross-entropy of probabilities: loss = -sum w (t log x + (1 - t)
// log(1 - x)), divided by the number of elements when sizeAverage (Torch7's
// BCECriterion(weights, sizeAverage)), computed as PyTorch 1.13's binary_cross_entropy (each
// log at least -100); the formula is math::loss::Bce. The input must lie in [0, 1], checked where
// it is (Backend::checkValues).
#pragma once

#include "nn/criterions/PointwiseCriterion.h"

namespace nn {

/// Torch7's nn.BCECriterion (PyTorch's BCELoss): binary cross-entropy of probabilities in [0, 1].
class BCECriterion : public PointwiseCriterion {
 public:
  /// weights: empty, or a 1-D tensor of finite weights (checked here), one for each index of the input's
  /// last dimension (checked at each call); the tensor is shared, not copied, so later changes to it take
  /// effect. sizeAverage: divide the sum by the number of elements (the default) or not.
  explicit BCECriterion(Tensor weights = Tensor(), bool sizeAverage = true);
  /// Without weights: Torch7's BCECriterion(nil, sizeAverage).
  explicit BCECriterion(bool sizeAverage) : BCECriterion(Tensor(), sizeAverage) {}
  std::string toString() const override { return "nn.BCECriterion"; }

 protected:
  void checkInput(const Tensor& input) override;

 private:
  Tensor checkedInput_;  // a strided input's contiguous copy, to check its range
};

}  // namespace nn
