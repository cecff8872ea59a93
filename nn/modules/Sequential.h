// nn::Sequential: feeds each module's output to the next. What passes between modules may be
// a tensor or a table (ConcatTable, then CAddTable).
#pragma once

#include <initializer_list>
#include <vector>

#include "nn/core/Container.h"
#include "nn/core/TableModule.h"

namespace nn {

/// Torch7's nn.Sequential: its modules applied one after the other.
class Sequential : public TableModule<Container> {
 public:
  Sequential() = default;
  /// The modules in order: nn::Sequential net{std::make_shared<nn::Linear>(784, 10),
  /// std::make_shared<nn::LogSoftMax>()}, or std::make_shared<nn::Sequential>(modules) from a
  /// std::vector<nn::ModulePtr>.
  Sequential(std::initializer_list<ModulePtr> modules) : Sequential(std::vector<ModulePtr>(modules)) {}
  /// The modules of `modules`, in order.
  explicit Sequential(const std::vector<ModulePtr>& modules);
  /// The module of a saved config (which holds nothing), with its children in order.
  static ModulePtr create(const Config& config, std::vector<ModulePtr> children);

  /// Inserts a module before position `index` (0 .. size()).
  void insert(ModulePtr module, size_t index);
  /// Removes the module at `index` (0-based).
  void remove(size_t index);

  /// Also sets it on the first module, the one that sees this container's input, and on up
  /// through modules without parameters or buffers to the first that has some: behind a
  /// leading View or ReLU, the first Linear computes no gradInput either.
  void setGradInputNeeded(bool needed) override;

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  void accGradParametersActivity(const Activity& input, const Activity& gradOutput, float scale) override;

  std::string typeName() const override { return "nn.Sequential"; }
  std::string toString() const override;

 private:
  /// Whether module i takes module i + 1's passes into its own (Module::canTakeNext), so that
  /// the two run as one.
  bool takesNext(size_t i) const;

  /// The lowest module that backward runs: the topmost that computes no gradInput (0 where
  /// all do); an nn::Error where a module under it needs a gradOutput.
  size_t lowestInBackward() const;
};

}  // namespace nn
