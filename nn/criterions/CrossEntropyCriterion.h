// nn::CrossEntropyCriterion: LogSoftMax followed by ClassNLLCriterion, computed in one stable
// pass over raw scores; targets are class indices counted from 0, stored as floats.
#pragma once

#include "nn/criterions/Criterion.h"

namespace nn {

class CrossEntropyCriterion : public Criterion {
 public:
  /// sizeAverage divides the loss by the batch size.
  explicit CrossEntropyCriterion(bool sizeAverage = true) : Criterion(sizeAverage) {}

  /// input [batch, classes] or [classes] of scores; target [batch] or [1].
  float updateOutput(const Tensor& input, const Tensor& target) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& target) override;
  std::string toString() const override { return "nn.CrossEntropyCriterion"; }

 private:
};

}  // namespace nn
