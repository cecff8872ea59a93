// nn::Concat: Torch7's Concat. Every child gets the same input; their outputs are joined along
// one dimension, and gradInput is the sum of the children's gradInputs.
#pragma once

#include "nn/core/Container.h"
#include "nn/core/Options.h"

namespace nn {

/// The arguments of Concat.
struct ConcatOptions {
  /// The dimension of the children's outputs (counted from 0) along which they are joined; at least 0.
  /// Torch7's dimension counts from 1.
  int dim = 0;

  template <typename F>
  void visit(F&& field) {
    field("dim", dim);
  }
};

/// Torch7's nn.Concat: runs every child on the same input and joins their outputs along one dimension.
class Concat : public WithOptions<ConcatOptions, Container> {
 public:
  /// Joins along `dim` (from 0); the branches come with add().
  explicit Concat(int dim) : Concat(Options{dim}) {}
  /// The module of `options`, without branches; an nn::Error unless dim is at least 0.
  explicit Concat(const Options& options);
  /// The module of a saved config, with its branches.
  static ModulePtr create(const Config& config, std::vector<ModulePtr> children);

  /// Also sets it on every branch: each sees this container's input.
  void setGradInputNeeded(bool needed) override;

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;
  void clearState() override;

  std::string typeName() const override { return "nn.Concat"; }
  /// Torch7's block, the children drawn as branches from the input.
  std::string toString() const override { return describeBranches(typeName()); }

  /// The dimension along which the outputs are joined, from 0 (ConcatOptions::dim).
  int dim() const { return options_.dim; }

 private:
  // Checks gradOutput against the children's outputs and copies child i's part of it into
  // gradOutputParts_[i], contiguous, as the children expect their own gradOutput.
  void splitGradOutput(const Tensor& gradOutput);

  std::vector<int64_t> sizes_;  // scratch for output and part sizes, kept to avoid allocating
  std::vector<Tensor> gradOutputParts_;
};

}  // namespace nn
