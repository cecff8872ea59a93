// nn::SelectTable: Torch7's SelectTable(index): item `index` of the input table (from 0; a
// negative index counts from the end, -1 being the last), shared, not copied. gradInput has the
// input's shape: gradOutput (copied) at `index`, zeros elsewhere.
#pragma once

#include "nn/core/Options.h"
#include "nn/core/TableModule.h"

namespace nn {

/// The constructor arguments of nn::SelectTable.
struct SelectTableOptions {
  /// The item of the input table, from 0 (Torch7's from 1); negative counts from the end (-1 is the
  /// last).
  int64_t index = 0;

  template <typename F>
  void visit(F&& field) {
    field("index", index);
  }
};

/// Torch7's nn.SelectTable: one item of the input table.
class SelectTable : public WithOptions<SelectTableOptions, TableModule<>> {
 public:
  /// Item `index`, from 0: SelectTable(0) is Torch7's nn.SelectTable(1), SelectTable(-1) the last.
  explicit SelectTable(int64_t index) : SelectTable(Options{index}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit SelectTable(const Options& options) : WithOptions(options) {}

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  std::string typeName() const override { return "nn.SelectTable"; }

 private:
  // The index into `input`, resolved and checked.
  size_t indexIn(const Activity& input) const;
};

}  // namespace nn
