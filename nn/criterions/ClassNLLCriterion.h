// nn::ClassNLLCriterion: loss = -input[target] for log-probabilities, targets are class
// indices counted from 0, stored as floats.
#pragma once

#include "nn/criterions/Criterion.h"

namespace nn {

/// Torch7's nn.ClassNLLCriterion (PyTorch's NLLLoss without weights): the negative log-likelihood of the
/// target classes, given log-probabilities (from LogSoftMax).
class ClassNLLCriterion : public Criterion {
 public:
  /// sizeAverage: divide the loss and the gradient by the batch size (the default) or not.
  explicit ClassNLLCriterion(bool sizeAverage = true) : Criterion(sizeAverage) {}

  /// input [batch, classes] or [classes] of log-probabilities; target [batch] or [1] of class indices from
  /// 0, as floats, on the input's device. An index out of range is an nn::Error (on a CUDA device, at its
  /// next host wait).
  float updateOutput(const Tensor& input, const Tensor& target) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& target) override;
  std::string toString() const override { return "nn.ClassNLLCriterion"; }

};

}  // namespace nn
