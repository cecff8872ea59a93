// nn::JoinTable: Torch7's JoinTable(dimension): the tensors of a table joined along dimension
// `dim` (from 0) into one tensor; gradInput item i is gradOutput's part of input i, copied.
#pragma once

#include "nn/core/Options.h"
#include "nn/core/TableModule.h"

namespace nn {

/// The arguments of JoinTable.
struct JoinTableOptions {
  /// The dimension along which the tensors are joined, from 0 (Torch7's dimension counts from 1); at least 0.
  /// The tensors must have it and agree in size on every other dimension. Torch7's nInputDims is not offered.
  int dim = 0;

  template <typename F>
  void visit(F&& field) {
    field("dim", dim);
  }
};

/// Torch7's nn.JoinTable: the tensors of a table joined along one dimension into one tensor.
class JoinTable : public WithOptions<JoinTableOptions, TableModule<>> {
 public:
  /// Joins along `dim` (from 0).
  explicit JoinTable(int dim) : JoinTable(Options{dim}) {}
  /// The module of `options`; an nn::Error unless dim is at least 0.
  explicit JoinTable(const Options& options);

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  std::string typeName() const override { return "nn.JoinTable"; }

 private:
  // The input's tensors, checked to be a table of tensors on one device.
  const std::vector<const Tensor*>& checkInput(const Activity& input);

  std::vector<const Tensor*> parts_;
  std::vector<int64_t> sizes_;
};

}  // namespace nn
