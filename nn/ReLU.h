// nn::ReLU: y = max(0, x); Torch7's nn.ReLU([inplace]).
#pragma once

#include "nn/Module.h"

namespace nn {

class ReLU : public Module {
 public:
  /// inplace: the output is the input, overwritten, and gradInput is gradOutput, overwritten
  /// (Torch7's nn.ReLU(true)). It saves a buffer and a pass over memory each way; the module
  /// before must not need its output again, nor the module after its gradInput.
  explicit ReLU(bool inplace = false) : inplace_(inplace) {}
  static ModulePtr create(const Config& config, std::vector<ModulePtr> children);

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  bool inplace() const { return inplace_; }
  std::string typeName() const override { return "nn.ReLU"; }
  std::string toString() const override;
  Config config() const override;

 private:
  bool inplace_;
};

}  // namespace nn
