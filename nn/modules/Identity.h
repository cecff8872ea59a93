// nn::Identity: output is the input and gradInput is gradOutput, tensors or tables, shared, not
// copied (as Torch7's).
#pragma once

#include "nn/core/TableModule.h"

namespace nn {

/// Torch7's nn.Identity: passes the input forward and gradOutput back, shared, tensors or tables.
class Identity : public TableModule<> {
 public:
  Identity() = default;

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  std::string typeName() const override { return "nn.Identity"; }
};

}  // namespace nn
