// nn::ClassNLLCriterion: loss = -input[target] for log-probabilities, targets are class
// indices counted from 0, stored as floats.
#pragma once

#include "nn/criterions/Criterion.h"

namespace nn {

class ClassNLLCriterion : public Criterion {
 public:
  explicit ClassNLLCriterion(bool sizeAverage = true) : Criterion(sizeAverage) {}

  /// input [batch, classes] or [classes]; target [batch] or [1].
  float updateOutput(const Tensor& input, const Tensor& target) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& target) override;
  std::string toString() const override { return "nn.ClassNLLCriterion"; }

};

}  // namespace nn
