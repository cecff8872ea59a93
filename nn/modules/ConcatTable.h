// nn::ConcatTable: Torch7's ConcatTable. Every child gets the same input, a tensor or a table;
// the output is the table of their outputs, and gradInput the sum of their gradInputs. With
// CAddTable after it, it makes a residual block (fb.resnet's shortcut).
#pragma once

#include "nn/core/Container.h"
#include "nn/core/TableModule.h"

namespace nn {

/// Torch7's nn.ConcatTable: runs every child on the same input; the output is the table of their outputs.
class ConcatTable : public TableModule<Container> {
 public:
  ConcatTable() = default;
  /// The module of a saved config, with its branches.
  static ModulePtr create(const Config& config, std::vector<ModulePtr> children);

  /// Also sets it on every branch: each sees this container's input.
  void setGradInputNeeded(bool needed) override;

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  void accGradParametersActivity(const Activity& input, const Activity& gradOutput, float scale) override;

  std::string typeName() const override { return "nn.ConcatTable"; }
  /// Torch7's block, the children drawn as branches from the input.
  std::string toString() const override { return describeBranches(typeName()); }

 private:
  // gradOutput as a table of one item per branch, or an nn::Error that says what came.
  const Table& checkGradOutput(const Activity& gradOutput) const;
};

}  // namespace nn
