// nn::Sigmoid: y = 1 / (1 + exp(-x)), element-wise; the backward reads the output, as Torch7's.
#pragma once

#include "nn/Module.h"

namespace nn {

class Sigmoid : public Module {
 public:
  Sigmoid() = default;
  static ModulePtr create(const Config& config, std::vector<ModulePtr> children);

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  std::string typeName() const override { return "nn.Sigmoid"; }
};

}  // namespace nn
