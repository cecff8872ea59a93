// nn::NarrowTable: Torch7's NarrowTable(offset, length): the table of items [offset, offset +
// length) of the input table (from 0), shared, not copied. A negative offset counts from the
// end (-1 is the last item), and a negative length ends that many items before the end plus
// one (-1 reaches the last item), as Narrow does; a length of 0 is refused. gradInput has the
// input's shape: gradOutput's items (copied) in the range, zeros elsewhere.
#pragma once

#include "nn/core/Options.h"
#include "nn/core/TableModule.h"

namespace nn {

/// The arguments of NarrowTable.
struct NarrowTableOptions {
  /// The first item kept, from 0 (Torch7's offset counts from 1); a negative one counts from the end (-1 is the
  /// last item).
  int64_t offset = 0;
  /// The number of items kept, at least 1 once resolved; a negative one ends that many items before the end plus
  /// one (-1 reaches the last item). Default 1.
  int64_t length = 1;

  template <typename F>
  void visit(F&& field) {
    field("offset", offset);
    field("length", length);
  }
};

/// Torch7's nn.NarrowTable: a range of items of the input table.
class NarrowTable : public WithOptions<NarrowTableOptions, TableModule<>> {
 public:
  /// Items [offset, offset + length), as NarrowTableOptions describes them.
  explicit NarrowTable(int64_t offset, int64_t length = 1) : NarrowTable(Options{offset, length}) {}
  /// The module of `options`; the range is checked against each input.
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
