// nn::CAddTable: Torch7's CAddTable: the sum of a table of tensors of one size. gradInput item i is gradOutput
// (copied).
#pragma once

#include "nn/ElementwiseTable.h"

namespace nn {

class CAddTable : public ElementwiseTable {
 public:
  CAddTable() : ElementwiseTable(0) {}

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  std::string typeName() const override { return "nn.CAddTable"; }
};

}  // namespace nn
