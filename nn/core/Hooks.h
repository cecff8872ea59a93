// Module hooks, as PyTorch's register_forward_pre_hook, register_forward_hook and
// register_full_backward_hook: functions a module calls around its passes, for feature
// extraction and gradient statistics, each removable through the handle its registration
// returns (Module::registerForwardHook and the others).
//
// They run where the module's passes run: in the module's forward() and backward(), and where a
// container runs it as a child (its updateOutput and updateGradInput); in a DataParallelTable, the
// first replica's modules' hooks run, on that replica's device thread, for its share of the
// batch. A forward pre-hook sees the input; a forward hook the input and the output; a backward
// hook gradInput (empty where it is not needed) and gradOutput, once updateGradInput is done. A
// hook that throws stops the pass there: the error reaches the caller, and the module stays
// usable (its output or gradInput is the pass's; the hooks after it did not run).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace nn {

class Activity;
class Module;

/// Called before the module's forward, with its input.
using ForwardPreHook = std::function<void(Module& module, const Activity& input)>;
/// Called after the module's forward, with its input and output (read them; the output is the
/// module's own and the next forward overwrites it).
using ForwardHook = std::function<void(Module& module, const Activity& input, const Activity& output)>;
/// Called after the module's updateGradInput, with gradInput and gradOutput.
using BackwardHook = std::function<void(Module& module, const Activity& gradInput, const Activity& gradOutput)>;

/// A module's hooks, in the order they were registered (Module keeps one where it has any).
struct ModuleHooks {
  std::vector<std::pair<uint64_t, ForwardPreHook>> forwardPre;
  std::vector<std::pair<uint64_t, ForwardHook>> forward;
  std::vector<std::pair<uint64_t, BackwardHook>> backward;
  uint64_t nextId = 1;
  bool empty() const { return forwardPre.empty() && forward.empty() && backward.empty(); }
};

/// Removes the hook it was returned for (PyTorch's RemovableHandle). Removing it twice, or once
/// the module is gone, does nothing.
class HookHandle {
 public:
  HookHandle() = default;
  /// Removes the hook from its module.
  void remove();

 private:
  friend class Module;
  HookHandle(std::weak_ptr<ModuleHooks> hooks, uint64_t id) : hooks_(std::move(hooks)), id_(id) {}
  std::weak_ptr<ModuleHooks> hooks_;
  uint64_t id_ = 0;
};

}  // namespace nn
