// nn::Container: a module made of child modules (Sequential, Concat, ...).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nn/core/Module.h"

namespace nn {

/// The base of the modules that hold child modules in order (Torch7's nn.Container): the children
/// are what children() returns, so parameters, stateDict, to(), clone() and the rest walk them.
class Container : public Module {
 public:
  /// Appends a module; returns this container for chaining. The container itself, or a module
  /// that holds it, is an nn::Error (its forward would never end). A module may be added in two
  /// places, as in Torch7: its parameters are listed, and its gradients summed, once per place;
  /// but it keeps only the output and gradInput of its last call, which its neighbours may read
  /// in backward, so a clone() sharing nothing is the safe way to use a layer twice.
  Container& add(ModulePtr module);
  /// Appends a module under `name` (PyTorch's named children, `nn.Sequential(OrderedDict)`): its
  /// tensors are "name.weight" in stateDict and the files written from it, and its print is
  /// "(name): ...". A name is unique among the children's, has no '.', and is not another
  /// child's index; the empty name lifts the child's own names to this level (a residual block's
  /// branches, whose layers a PyTorch model names in the block itself). nn::save and clone()
  /// keep the names.
  Container& add(const std::string& name, ModulePtr module);
  /// Child i, counted from 0 (printed descriptions count from 1, as Torch7's).
  ModulePtr get(size_t index) const;
  /// The child named `name` (add(name, module)); an nn::Error where none is.
  ModulePtr get(const std::string& name) const;
  /// Number of children (Torch7's `container:size()`).
  size_t size() const { return modules_.size(); }
  const std::vector<ModulePtr>& children() const override { return modules_; }
  std::string childName(size_t index) const override;
  /// Each child's name as add(name, module) gave it; nullopt for a child known by its index
  /// (empty for a container whose children have no names).
  const std::vector<std::optional<std::string>>& childNames() const { return names_; }
  /// Names the children (as childNames() returns them), checked as add(name, module) checks a
  /// name; `source` starts the message of an nn::Error.
  void setChildNames(const std::vector<std::optional<std::string>>& names, const std::string& source = "");

 protected:
  /// Runs fn() for child `index`; an nn::Error from it gets the child's place, "(8) ", in front.
  template <typename Fn>
  decltype(auto) inChild(size_t index, Fn&& fn) const {
    try {
      return fn();
    } catch (const Error& e) {
      throw Error("(" + std::to_string(index + 1) + ") " + e.what());
    }
  }
  /// Child i's updateOutput, updateGradInput and accGradParameters, each run in inChild(),
  /// timed into the child's record when profiling is on (nn/core/Profiler.h) and, when numerics
  /// checks are on (nn/core/Numerics.h), checked for NaN and Inf. T is Tensor (the tensor passes)
  /// or Activity (the activity passes). After the child's accGradParameters the thread's
  /// GradientObserver (nn/core/GradientObserver.h) is told.
  template <typename T>
  const T& childUpdateOutput(size_t i, const T& input);
  /// Child i's updateGradInputIfNeeded (a child whose gradInput is not needed leaves it empty),
  /// run, timed and checked as childUpdateOutput.
  template <typename T>
  const T& childUpdateGradInput(size_t i, const T& input, const T& gradOutput);
  /// Child i's accGradParameters (accGradParametersActivity for T = Activity), run, timed and
  /// checked as the above; then the thread's GradientObserver is told that its gradients are done.
  template <typename T>
  void childAccGradParameters(size_t i, const T& input, const T& gradOutput, float scale);
  /// Throws an nn::Error naming this container where it has no child (a pass needs one).
  void checkNotEmpty() const;
  /// The checks of add() and insert(): `module` is not null, neither this container nor one
  /// that holds it. `call` names the call in the message ("add").
  void checkNewChild(const Module* module, const char* call) const;
  /// Each child's description on its own line, "(i): ", indented below a header and, unless
  /// `flow` is empty, a line that draws how data flows through them.
  std::string describeChildren(const std::string& header, const std::string& flow) const;
  /// Torch7's block of a container whose children all see its input (Concat, ConcatTable,
  /// ParallelTable): each child on a branch drawn from the input.
  std::string describeBranches(const std::string& header) const;

  /// The children, in order (Torch7's `container.modules`); add() appends to it.
  std::vector<ModulePtr> modules_;
  /// Their names (childNames()): empty while no child has one, else one per child; a subclass
  /// that inserts or removes children keeps it in step.
  std::vector<std::optional<std::string>> names_;

 private:
  /// Throws unless `names` (one per child) are names add(name, module) would take.
  void checkNames(const std::vector<std::optional<std::string>>& names, const std::string& source) const;
};

}  // namespace nn
