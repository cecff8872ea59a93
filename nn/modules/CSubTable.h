// nn::CSubTable: Torch7's CSubTable: input[0] - input[1], for two tensors of one size; gradInput is
// {gradOutput, -gradOutput}.
#pragma once

#include "nn/modules/ElementwiseTable.h"

namespace nn {

/// Torch7's nn.CSubTable: input[0] - input[1], element by element, for a table of two tensors of one size.
class CSubTable : public ElementwiseTable {
 public:
  CSubTable() : ElementwiseTable(2) {}

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  std::string typeName() const override { return "nn.CSubTable"; }
};

}  // namespace nn
