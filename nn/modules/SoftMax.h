// nn::SoftMax: exp(x_c) / sum_k exp(x_k) over the class dimension, chosen as Torch7 does:
// the last of a [C] or [N, C] input, the planes of a [C, H, W] or [N, C, H, W] input.
#pragma once

#include "nn/core/Module.h"

namespace nn {

/// Torch7's nn.SoftMax: exponentials normalised to sum to 1 along the class dimension (see above).
class SoftMax : public Module {
 public:
  SoftMax() = default;

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void clearState() override;
  std::string typeName() const override { return "nn.SoftMax"; }

 private:
  // Per-column max and sum (forward) or dot product (backward), one per inner index.
  Tensor columns_;
};

}  // namespace nn
