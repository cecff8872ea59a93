// nn::CMulTable: Torch7's CMulTable: the element-wise product of a table of tensors of one size.
// gradInput item i is gradOutput times the product of the other inputs (multiplied out, not
// divided, so that zeros in the input are no trouble).
#pragma once

#include "nn/modules/ElementwiseTable.h"

namespace nn {

/// Torch7's nn.CMulTable: the element-wise product of a table of tensors of one size (one or more).
class CMulTable : public ElementwiseTable {
 public:
  CMulTable() : ElementwiseTable(0) {}

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  std::string typeName() const override { return "nn.CMulTable"; }
};

}  // namespace nn
