// nn::SelectTable: Torch7's SelectTable(index): item `index` of the input table (from 0; a
// negative index counts from the end, -1 being the last), shared, not copied. gradInput has the
// input's shape: gradOutput (copied) at `index`, zeros elsewhere.
#pragma once

#include "nn/core/Options.h"
#include "nn/core/TableModule.h"

namespace nn {

struct SelectTableOptions {
  int64_t index = 0;

  template <typename F>
  void visit(F&& field) {
    field("index", index);
  }
};

class SelectTable : public WithOptions<SelectTableOptions, TableModule<>> {
 public:
  explicit SelectTable(int64_t index) : SelectTable(Options{index}) {}
  explicit SelectTable(const Options& options) : WithOptions(options) {}

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  std::string typeName() const override { return "nn.SelectTable"; }

 private:
  // The index into `input`, resolved and checked.
  size_t indexIn(const Activity& input) const;
};

}  // namespace nn
