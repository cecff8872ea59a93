// nn::JoinTable: Torch7's JoinTable(dimension, nInputDims): the tensors of a table joined along
// dimension `dim` (from 0) into one tensor; gradInput item i is gradOutput's part of input i,
// copied. A negative dimension counts from the end; with nInputDims >= 0, inputs of more
// dimensions are a batch and the dimension counts from their second (nn/modules/Dimension.h).
#pragma once

#include "nn/core/Options.h"
#include "nn/core/TableModule.h"

namespace nn {

/// The arguments of JoinTable.
struct JoinTableOptions {
  /// The dimension along which the tensors are joined, from 0 (Torch7's dimension counts from 1);
  /// negative counts from the end. The tensors must have it and agree in size on every other one.
  int dim = 0;
  /// The dimensions of one sample, or -1 (the default): inputs of more have a batch dimension
  /// first, and a non-negative `dim` counts after it.
  int nInputDims = -1;

  template <typename F>
  void visit(F&& field) {
    field("dim", dim);
    field("nInputDims", nInputDims, DefaultIfAbsent{});
  }
};

/// Torch7's nn.JoinTable: the tensors of a table joined along one dimension into one tensor.
class JoinTable : public WithOptions<JoinTableOptions, TableModule<>> {
 public:
  /// Joins along `dim` (from 0), with `nInputDims` as JoinTableOptions describes them:
  /// JoinTable(0) is Torch7's nn.JoinTable(1).
  explicit JoinTable(int dim, int nInputDims = -1) : JoinTable(Options{dim, nInputDims}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit JoinTable(const Options& options) : WithOptions(options) {}

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  std::string typeName() const override { return "nn.JoinTable"; }

  /// The dimension, from 0, that inputs shaped as `first` are joined along; an nn::Error naming
  /// the module where they have no such dimension.
  int dimensionFor(const Tensor& first) const;

 private:
  // The input's tensors, checked to be a table of tensors on one device.
  const std::vector<const Tensor*>& checkInput(const Activity& input);

  std::vector<const Tensor*> parts_;
  std::vector<int64_t> sizes_;
};

}  // namespace nn
