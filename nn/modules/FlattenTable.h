// nn::FlattenTable: Torch7's FlattenTable: a nested table made flat, its tensors in depth-first
// order, shared, not copied; gradInput puts gradOutput's items back into the input's nesting.
#pragma once

#include "nn/core/TableModule.h"

namespace nn {

/// Torch7's nn.FlattenTable: the tensors of a nested table, depth first, as one flat table.
class FlattenTable : public TableModule<> {
 public:
  FlattenTable() = default;

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  std::string typeName() const override { return "nn.FlattenTable"; }

 private:
  std::vector<Tensor> tensors_;
};

}  // namespace nn
