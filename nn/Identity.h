// nn::Identity: output is the input and gradInput is gradOutput, shared, not copied (as Torch7's).
#pragma once

#include "nn/Module.h"

namespace nn {

class Identity : public Module {
 public:
  Identity() = default;

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  std::string typeName() const override { return "nn.Identity"; }
};

}  // namespace nn
