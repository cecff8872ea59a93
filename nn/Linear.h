// nn::Linear: y = x W^T + b, with W of shape outputSize x inputSize (Torch7's layout).
// Input [inputSize], [batch, inputSize] or, as PyTorch, [..., inputSize].
#pragma once

#include "nn/Module.h"

namespace nn {

class Linear : public Module {
 public:
  Linear(int64_t inputSize, int64_t outputSize, bool withBias = true);
  static ModulePtr create(const Config& config, std::vector<ModulePtr> children);

  /// Uniform in +-1/sqrt(inputSize), from the default generator (Torch7's reset).
  void reset();

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;

  std::string typeName() const override { return "nn.Linear"; }
  std::string toString() const override;
  Config config() const override;

  int64_t inputSize() const { return inputSize_; }
  int64_t outputSize() const { return outputSize_; }

  Tensor weight, bias, gradWeight, gradBias;

 private:
  void checkInput(const Tensor& input) const;
  void checkGradOutput(const Tensor& gradOutput, const Tensor& input) const;

  int64_t inputSize_;
  int64_t outputSize_;
  bool withBias_;
  std::vector<int64_t> outputSizes_;
};

}  // namespace nn
