// nn::MSECriterion: loss = sum (input - target)^2, divided by the number of elements when
// sizeAverage (Torch7's MSECriterion).
#pragma once

#include "nn/Criterion.h"

namespace nn {

class MSECriterion : public Criterion {
 public:
  explicit MSECriterion(bool sizeAverage = true) : Criterion(sizeAverage) {}

  /// input and target of one size, any number of dimensions.
  float updateOutput(const Tensor& input, const Tensor& target) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& target) override;
  std::string toString() const override { return "nn.MSECriterion"; }

 private:
  void check(const Tensor& input, const Tensor& target) const;
};

}  // namespace nn
