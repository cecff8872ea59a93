// nn::SplitTable: Torch7's SplitTable(dimension): a tensor split along dimension `dim` (from 0)
// into a table of its slices, each without that dimension, copied; gradInput stacks the table
// gradOutput back along `dim`.
#pragma once

#include "nn/core/Options.h"
#include "nn/core/TableModule.h"

namespace nn {

/// The constructor arguments of nn::SplitTable.
struct SplitTableOptions {
  /// The dimension to split along, from 0 (Torch7's `dimension`, from 1); at least 0.
  int dim = 0;

  template <typename F>
  void visit(F&& field) {
    field("dim", dim);
  }
};

/// Torch7's nn.SplitTable: a tensor split into the table of its slices along one dimension.
class SplitTable : public WithOptions<SplitTableOptions, TableModule<>> {
 public:
  /// Slices along dimension `dim`, from 0: SplitTable(0) is Torch7's nn.SplitTable(1).
  explicit SplitTable(int dim) : SplitTable(Options{dim}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit SplitTable(const Options& options);

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  void clearState() override;
  std::string typeName() const override { return "nn.SplitTable"; }

 private:
  // The input, checked to have dimension dim.
  const Tensor& checkInput(const Activity& input) const;

  Tensor contiguousInput_, contiguousGradOutput_;  // strided inputs' contiguous copies
  Tensor itemKept_;                                // an item seen with dim kept, of size 1
  std::vector<int64_t> kept_, itemSizes_;
};

}  // namespace nn
