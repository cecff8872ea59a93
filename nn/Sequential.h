// nn::Sequential: feeds each module's output to the next.
#pragma once

#include "nn/Container.h"

namespace nn {

class Sequential : public Container {
 public:
  Sequential() = default;
  static ModulePtr create(const Config& config, std::vector<ModulePtr> children);

  /// Inserts a module before position `index` (0 .. size()).
  void insert(ModulePtr module, size_t index);
  /// Removes the module at `index` (0-based).
  void remove(size_t index);

  /// Also sets it on the first module, the one that sees this container's input.
  void setGradInputNeeded(bool needed) override;

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;

  std::string typeName() const override { return "nn.Sequential"; }
  std::string toString() const override;
};

}  // namespace nn
