// nn::CAddTable: Torch7's CAddTable([inplace]): the sum of a table of tensors of one size.
// gradInput item i is gradOutput: a copy of it each, or, in place, gradOutput itself.
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ElementwiseTable.h"

namespace nn {

/// The arguments of CAddTable.
struct CAddTableOptions {
  /// Torch7's nn.CAddTable(true) (fb.resnet's residual blocks): the output is input[0], the
  /// others added into it, and every gradInput item is gradOutput itself. It saves a copy each
  /// way and one for each further input backward; the module before must not need input[0]
  /// again, and no module below may write into its gradOutput in place while another still
  /// reads its own (they all share one tensor).
  bool inplace = false;

  template <typename F>
  void visit(F&& field) {
    // Files written before the in-place variant existed have no such entry.
    field("inplace", inplace, DefaultIfAbsent{});
  }
};

/// Torch7's nn.CAddTable: the element-wise sum of a table of tensors of one size (one or more).
class CAddTable : public WithOptions<CAddTableOptions, ElementwiseTable> {
 public:
  /// Sums in place where `inplace` (CAddTableOptions::inplace).
  explicit CAddTable(bool inplace = false) : CAddTable(Options{inplace}) {}
  /// The module of `options`.
  explicit CAddTable(const Options& options) : WithOptions(options, 0) {}

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  std::string typeName() const override { return "nn.CAddTable"; }
  /// "nn.CAddTable", or "nn.CAddTable(true)" in place, as Torch7 prints them.
  std::string toString() const override { return options_.inplace ? "nn.CAddTable(true)" : "nn.CAddTable"; }
};

}  // namespace nn
