// nn::Concat: Torch7's Concat. Every child gets the same input; their outputs are joined along
// one dimension, and gradInput is the sum of the children's gradInputs.
#pragma once

#include "nn/Container.h"

namespace nn {

class Concat : public Container {
 public:
  /// dim: the dimension of the children's outputs (counted from 0) along which they are joined.
  explicit Concat(int dim);
  static ModulePtr create(const Config& config, std::vector<ModulePtr> children);

  /// Also sets it on every branch: each sees this container's input.
  void setGradInputNeeded(bool needed) override;

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;
  void clearState() override;

  std::string typeName() const override { return "nn.Concat"; }
  /// Torch7's block, the children drawn as branches from the input.
  std::string toString() const override;
  Config config() const override;

  int dim() const { return dim_; }

 private:
  // Checks gradOutput against the children's outputs and copies child i's part of it into
  // gradOutputParts_[i], contiguous, as the children expect their own gradOutput.
  void splitGradOutput(const Tensor& gradOutput);

  int dim_;
  std::vector<int64_t> sizes_;  // scratch for output and part sizes, kept to avoid allocating
  std::vector<Tensor> gradOutputParts_;
};

}  // namespace nn
