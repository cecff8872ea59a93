// nn::NarrowTable: Torch7's NarrowTable(offset, length): the table of items [offset, offset +
// length) of the input table (from 0), shared, not copied. A negative offset counts from the
// end (-1 is the last item), and a negative length ends that many items before the end plus
// one (-1 reaches the last item), as Narrow does. gradInput has the input's shape: gradOutput's
// items (copied) in the range, zeros elsewhere.
#pragma once

#include "nn/core/Options.h"
#include "nn/core/TableModule.h"

namespace nn {

struct NarrowTableOptions {
  int64_t offset = 0;
  int64_t length = 1;

  template <typename F>
  void visit(F&& field) {
    field("offset", offset);
    field("length", length);
  }
};

class NarrowTable : public WithOptions<NarrowTableOptions, TableModule<>> {
 public:
  explicit NarrowTable(int64_t offset, int64_t length = 1) : NarrowTable(Options{offset, length}) {}
  explicit NarrowTable(const Options& options);

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  std::string typeName() const override { return "nn.NarrowTable"; }

 private:
  struct Range {
    size_t offset, length;
  };
  // The range in `input`, resolved and checked.
  Range rangeIn(const Activity& input) const;
};

}  // namespace nn
