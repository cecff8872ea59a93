// nn::Linear: y = x W^T + b, with W of shape outputSize x inputSize (Torch7's layout).
// Input [inputSize], [batch, inputSize] or, as PyTorch, [..., inputSize].
#pragma once

#include "nn/core/Options.h"

namespace nn {

struct LinearOptions {
  int64_t inputSize = 0;
  int64_t outputSize = 0;
  /// Adds a learned bias b.
  bool bias = true;

  template <typename F>
  void visit(F&& field) {
    field("inputSize", inputSize);
    field("outputSize", outputSize);
    field("bias", bias);
  }
};

class Linear : public WithOptions<LinearOptions> {
 public:
  Linear(int64_t inputSize, int64_t outputSize, bool withBias = true)
      : Linear(Options{inputSize, outputSize, withBias}) {}
  explicit Linear(const Options& options);

  /// Uniform in +-1/sqrt(inputSize), from the default generator (Torch7's reset).
  void reset();

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;
  void clearState() override;

  std::string typeName() const override { return "nn.Linear"; }
  /// "nn.Linear(800 -> 500)", then " without bias".
  std::string toString() const override;

  int64_t inputSize() const { return options_.inputSize; }
  int64_t outputSize() const { return options_.outputSize; }

  Tensor weight, bias, gradWeight, gradBias;

 private:
  void checkInput(const Tensor& input) const;
  void checkGradOutput(const Tensor& gradOutput, const Tensor& input) const;

  std::vector<int64_t> outputSizes_;
  // The kernels' own (on the CPU, the rearranged batch of the forward and gradInput).
  Tensor workspace_;
};

}  // namespace nn
