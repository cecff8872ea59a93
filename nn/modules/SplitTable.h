// nn::SplitTable: Torch7's SplitTable(dimension, nInputDims): a tensor split along dimension
// `dim` (from 0) into a table of its slices, each without that dimension, copied; gradInput stacks
// the table gradOutput back along `dim`. A negative dimension counts from the end; with
// nInputDims >= 0, an input of more dimensions is a batch and the dimension counts from its
// second (nn/modules/Dimension.h).
#pragma once

#include "nn/core/Options.h"
#include "nn/core/TableModule.h"

namespace nn {

/// The constructor arguments of nn::SplitTable.
struct SplitTableOptions {
  /// The dimension to split along, from 0 (Torch7's `dimension`, from 1); negative counts from
  /// the end.
  int dim = 0;
  /// The dimensions of one sample, or -1 (the default): an input of more has a batch dimension
  /// first, and a non-negative `dim` counts after it.
  int nInputDims = -1;

  template <typename F>
  void visit(F&& field) {
    field("dim", dim);
    field("nInputDims", nInputDims, DefaultIfAbsent{});
  }
};

/// Torch7's nn.SplitTable: a tensor split into the table of its slices along one dimension.
class SplitTable : public WithOptions<SplitTableOptions, TableModule<>> {
 public:
  /// Slices along dimension `dim`, from 0, with `nInputDims` as SplitTableOptions describes them:
  /// SplitTable(0) is Torch7's nn.SplitTable(1).
  explicit SplitTable(int dim, int nInputDims = -1) : SplitTable(Options{dim, nInputDims}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit SplitTable(const Options& options) : WithOptions(options) {}

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  void clearState() override;
  std::string typeName() const override { return "nn.SplitTable"; }

  /// The dimension, from 0, that an input shaped as `input` is split along; an nn::Error naming
  /// the module where it has no such dimension.
  int dimensionFor(const Tensor& input) const;

 private:
  Tensor contiguousInput_, contiguousGradOutput_;  // strided inputs' contiguous copies
  Tensor itemKept_;                                // an item seen with dim kept, of size 1
  std::vector<int64_t> kept_, itemSizes_;
};

}  // namespace nn
