// nn::SplitTable: Torch7's SplitTable(dimension): a tensor split along dimension `dim` (from 0)
// into a table of its slices, each without that dimension, copied; gradInput stacks the table
// gradOutput back along `dim`.
#pragma once

#include "nn/core/Options.h"
#include "nn/core/TableModule.h"

namespace nn {

struct SplitTableOptions {
  int dim = 0;

  template <typename F>
  void visit(F&& field) {
    field("dim", dim);
  }
};

class SplitTable : public WithOptions<SplitTableOptions, TableModule<>> {
 public:
  explicit SplitTable(int dim) : SplitTable(Options{dim}) {}
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
