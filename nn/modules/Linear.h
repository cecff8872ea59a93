// nn::Linear: y = x W^T + b, with W of shape outputSize x inputSize (Torch7's layout).
// Input [inputSize], [batch, inputSize] or, as PyTorch, [..., inputSize].
#pragma once

#include "nn/core/Options.h"

namespace nn {

/// The arguments of Linear.
struct LinearOptions {
  /// The number of input features, the input's last dimension; positive.
  int64_t inputSize = 0;
  /// The number of output features, the output's last dimension; positive.
  int64_t outputSize = 0;
  /// Adds a learned bias b. Default true; the constructor calls it withBias (Torch7: Linear(in, out, false)).
  bool bias = true;

  template <typename F>
  void visit(F&& field) {
    field("inputSize", inputSize);
    field("outputSize", outputSize);
    field("bias", bias);
  }
};

/// Torch7's nn.Linear: y = x W^T + b over the input's last dimension.
class Linear : public WithOptions<LinearOptions> {
 public:
  /// W of outputSize x inputSize and, where `withBias`, b of outputSize, initialised by reset().
  Linear(int64_t inputSize, int64_t outputSize, bool withBias = true)
      : Linear(Options{inputSize, outputSize, withBias}) {}
  /// The module of `options`; an nn::Error unless both sizes are positive.
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

  /// The number of input features (LinearOptions::inputSize).
  int64_t inputSize() const { return options_.inputSize; }
  /// The number of output features (LinearOptions::outputSize).
  int64_t outputSize() const { return options_.outputSize; }

  /// W, outputSize x inputSize (Torch7's layout).
  Tensor weight;
  /// b, [outputSize]; empty without bias.
  Tensor bias;
  /// Gradient of the loss with respect to W, outputSize x inputSize, summed over the batch and accumulated
  /// (times scale) by accGradParameters; zeroed by zeroGradParameters.
  Tensor gradWeight;
  /// Gradient of the loss with respect to b, [outputSize], summed over the batch and accumulated (times scale)
  /// by accGradParameters; zeroed by zeroGradParameters; empty without bias.
  Tensor gradBias;

 private:
  void checkInput(const Tensor& input) const;
  void checkGradOutput(const Tensor& gradOutput, const Tensor& input) const;

  std::vector<int64_t> outputSizes_;
  // The kernels' own (on the CPU, the rearranged batch of the forward and gradInput).
  Tensor workspace_;
};

}  // namespace nn
