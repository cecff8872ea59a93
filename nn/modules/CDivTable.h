// nn::CDivTable: Torch7's CDivTable: input[0] / input[1], element by element, for two tensors of one size.
// gradInput: {gradOutput / input[1], -gradOutput / input[1] * output}, output being
// input[0] / input[1] (d(a/b)/db = -a/b^2).
#pragma once

#include "nn/modules/ElementwiseTable.h"

namespace nn {

/// Torch7's nn.CDivTable: input[0] / input[1], element by element, for a table of two tensors of one size.
class CDivTable : public ElementwiseTable {
 public:
  CDivTable() : ElementwiseTable(2) {}

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  std::string typeName() const override { return "nn.CDivTable"; }
};

}  // namespace nn
