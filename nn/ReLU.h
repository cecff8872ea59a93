// nn::ReLU: y = max(0, x).
#pragma once

#include "nn/Module.h"

namespace nn {

class ReLU : public Module {
 public:
  ReLU() = default;
  static ModulePtr create(const Config& config, std::vector<ModulePtr> children);

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  std::string typeName() const override { return "nn.ReLU"; }
};

}  // namespace nn
