// nn::LogSoftMax: x_c - log sum_k exp(x_k) over the class dimension, chosen as Torch7 does:
// the last of a [C] or [N, C] input, the planes of a [C, H, W] or [N, C, H, W] input.
#pragma once

#include "nn/core/Module.h"

namespace nn {

/// Torch7's nn.LogSoftMax: the log of the softmax over the class dimension.
class LogSoftMax : public Module {
 public:
  LogSoftMax() = default;

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void clearState() override;
  std::string typeName() const override { return "nn.LogSoftMax"; }

 private:
  // Per-column max and sum (forward) or sum of gradOutput (backward), one per inner index.
  Tensor columns_;
};

}  // namespace nn
