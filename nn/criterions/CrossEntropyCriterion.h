// nn::CrossEntropyCriterion: LogSoftMax followed by ClassNLLCriterion, computed in one stable
// pass over raw scores; targets are class indices counted from 0, stored as floats.
#pragma once

#include "nn/criterions/Criterion.h"

namespace nn {

/// Torch7's nn.CrossEntropyCriterion (PyTorch's CrossEntropyLoss without weights): softmax cross-entropy
/// of raw class scores.
class CrossEntropyCriterion : public Criterion {
 public:
  /// sizeAverage divides the loss by the batch size.
  explicit CrossEntropyCriterion(bool sizeAverage = true) : Criterion(sizeAverage) {}

  /// input [batch, classes] or [classes] of scores; target [batch] or [1] of class indices from 0, as floats,
  /// on the input's device. An index out of range is an nn::Error (on a CUDA device, at its next host wait).
  float updateOutput(const Tensor& input, const Tensor& target) override;
  /// softmax(input) - onehot(target) for each row, divided by the batch size where sizeAverage.
  const Tensor& updateGradInput(const Tensor& input, const Tensor& target) override;
  std::string toString() const override { return "nn.CrossEntropyCriterion"; }

 private:
};

}  // namespace nn
