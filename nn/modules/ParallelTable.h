// nn::ParallelTable: Torch7's ParallelTable. Child i gets item i of the input table; the output
// is the table of their outputs, gradInput the table of their gradInputs.
#pragma once

#include "nn/core/Container.h"
#include "nn/core/TableModule.h"

namespace nn {

/// Torch7's nn.ParallelTable: child i applied to item i of the input table.
class ParallelTable : public TableModule<Container> {
 public:
  ParallelTable() = default;
  /// The module of a saved config, with its children.
  static ModulePtr create(const Config& config, std::vector<ModulePtr> children);

  /// Also sets it on every child: each sees an item of this container's input.
  void setGradInputNeeded(bool needed) override;

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  void accGradParametersActivity(const Activity& input, const Activity& gradOutput, float scale) override;

  std::string typeName() const override { return "nn.ParallelTable"; }
  /// Torch7's block, the children drawn as branches from the input.
  std::string toString() const override { return describeBranches(typeName()); }

 private:
  // `a` as a table of one item per child, or an nn::Error naming `what` and what came.
  const Table& checkItems(const Activity& a, const char* what) const;
};

}  // namespace nn
