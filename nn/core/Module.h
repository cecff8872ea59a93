// nn::Module: Torch7's module contract.
//
// forward = updateOutput; backward = updateGradInput, then accGradParameters(scale).
// Gradients accumulate until zeroGradParameters(). output and gradInput belong to the
// module and are resized, not reallocated, from one call to the next.
//
// Note [Tensors and activities]
// What flows between modules is an nn::Activity, a tensor or a table of activities (Torch7's
// "a Tensor or a table of Tensors"). A module of tensors (Linear, ReLU, ...) overrides the
// tensor passes, updateOutput(const Tensor&) and the others; the activity passes
// (updateOutputActivity, ...) then take the tensor out of the activity, with an error naming
// the module where a table comes, and return the tensor result as an activity that shares the
// module's output (no copy, no allocation). A module that takes or returns tables (the table
// modules, Sequential, DataParallelTable) derives from TableModule<> and overrides the
// activity passes; its tensor passes go through them. forward and backward have both
// overloads: tensors in, tensors out (an error naming the table where the result is one), and
// activities in, activities out. Containers pass activities between their children.
//
// A module declares its own parameters (with their gradients) and buffers once, in its
// constructor, by pointer to its members; everything that walks the tree (parameters,
// getParameters, stateDict, to, clone, save) works from those declarations and from
// children(), so containers need no code of their own for it.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "nn/core/Activity.h"
#include "nn/core/Config.h"
#include "nn/core/Hooks.h"
#include "nn/core/Profiler.h"
#include "nn/tensor/Error.h"
#include "nn/tensor/Tensor.h"

namespace nn {

class Module;
/// How modules are held and passed: by shared pointer, so that a container shares its children with the
/// code that built it (and a module may sit in two places of a tree).
using ModulePtr = std::shared_ptr<Module>;

/// A new module T(args...) held by a shared pointer, as modules are held:
/// `nn::Sequential net{nn::make<nn::Linear>(784, 100), nn::make<nn::ReLU>()}`.
template <typename T, typename... Args>
std::shared_ptr<T> make(Args&&... args) {
  static_assert(std::is_base_of_v<Module, T>, "nn::make<T>: T is not an nn::Module");
  return std::make_shared<T>(std::forward<Args>(args)...);
}

/// A parameter or buffer under its stateDict name (what stateDict() and namedBuffers() list).
struct NamedTensor {
  /// The PyTorch state-dict name, dotted by child index: "0.weight", "3.running_mean".
  std::string name;
  /// The module's own tensor (a handle that shares it, not a copy).
  Tensor value;
};

/// A parameter under its stateDict name, with its gradient.
struct NamedParameter {
  /// The PyTorch state-dict name, dotted by child index: "0.weight".
  std::string name;
  /// The parameter, the module's own tensor (a handle that shares it, not a copy).
  Tensor value;
  /// Its gradient, of the same sizes, as accGradParameters accumulates it.
  Tensor gradient;
};

/// The base of every module: Torch7's nn.Module contract (see the top of this file).
class Module : public std::enable_shared_from_this<Module> {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  virtual ~Module() = default;

  /// Computes and returns output for input (= updateOutput, between the forward hooks). An
  /// input of an element type the module does not take is an nn::Error naming the module
  /// (takesElementType).
  const Tensor& forward(const Tensor& input) {
    if (input.dtype() != DType::Float32) checkElementType(input, "input");
    return hooks_ ? forwardHooked(input) : updateOutput(input);
  }
  /// updateGradInput (unless gradInput is not needed), then accGradParameters(scale);
  /// returns gradInput. (backwardPasses, which a module may do better in one go; then the
  /// backward hooks.)
  const Tensor& backward(const Tensor& input, const Tensor& gradOutput, float scale = 1.f) {
    if (input.dtype() != DType::Float32) checkElementType(input, "input");
    if (gradOutput.dtype() != DType::Float32) checkElementType(gradOutput, "gradOutput");
    const Tensor& g = backwardPasses(input, gradOutput, scale);
    if (hooks_) runBackwardHooks(Activity(g), Activity(gradOutput));
    return g;
  }
  /// forward for an input that is a tensor or a table (Note [Tensors and activities]):
  /// updateOutputActivity; returns outputActivity().
  const Activity& forward(const Activity& input) { return hooks_ ? forwardHooked(input) : updateOutputActivity(input); }
  /// backward for activities: updateGradInputActivity (unless gradInput is not needed), then
  /// accGradParametersActivity(scale); returns gradInputActivity(). `input` must be the input
  /// of the last forward. (backwardPassesActivity.)
  const Activity& backward(const Activity& input, const Activity& gradOutput, float scale = 1.f) {
    const Activity& g = backwardPassesActivity(input, gradOutput, scale);
    if (hooks_) runBackwardHooks(g, gradOutput);
    return g;
  }

  /// Registers `hook` to run before each forward of this module (nn/core/Hooks.h).
  HookHandle registerForwardPreHook(ForwardPreHook hook);
  /// Registers `hook` to run after each forward of this module.
  HookHandle registerForwardHook(ForwardHook hook);
  /// Registers `hook` to run after each updateGradInput of this module.
  HookHandle registerBackwardHook(BackwardHook hook);
  /// Runs the backward hooks; containers call it after a child's updateGradInput.
  void runBackwardHooks(const Activity& gradInput, const Activity& gradOutput);
  /// Whether a hook was ever registered on this module.
  bool hasHooks() const { return hooks_ != nullptr; }

  /// Computes output from input, stores it in output and returns it (Torch7's updateOutput).
  /// Keeps what backward needs of this input (masks, statistics); an nn::Error naming the module
  /// for an input of the wrong sizes or on a device other than the parameters'.
  virtual const Tensor& updateOutput(const Tensor& input) = 0;
  /// Computes gradInput, the gradient of the loss with respect to input, from gradOutput, the
  /// gradient with respect to output (of output's sizes); stores it in gradInput and returns it.
  /// `input` must be the input of the last updateOutput; the parameters' gradients are left as
  /// they are (accGradParameters adds to them).
  virtual const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) = 0;
  /// Adds scale * dLoss/dParameters to the gradients. Nothing for modules without parameters.
  virtual void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale);

  /// The passes on activities. The defaults serve modules of tensors: they call the tensor
  /// passes and return the tensor as an activity; table modules override them.
  virtual const Activity& updateOutputActivity(const Activity& input);
  /// updateGradInput on activities; the default takes the tensors out of `input` and `gradOutput`
  /// (an nn::Error for a table) and returns gradInput as an activity that shares it.
  virtual const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput);
  /// accGradParameters on activities; the default takes the tensors out of `input` and
  /// `gradOutput` (an nn::Error for a table).
  virtual void accGradParametersActivity(const Activity& input, const Activity& gradOutput, float scale);
  /// The result of the last updateOutputActivity (for a module of tensors, its output).
  const Activity& outputActivity() const { return outputActivity_; }
  /// The result of the last updateGradInputActivity (for a module of tensors, its gradInput).
  const Activity& gradInputActivity() const { return gradInputActivity_; }

  /// Whether backward computes gradInput (true unless switched off). Switch it off for a
  /// module whose input needs no gradient, such as a network's first layer (Torch7 users set
  /// `module.gradInput = nil`): backward then only accumulates the parameter gradients and
  /// leaves gradInput empty. A container passes the setting to the children that see its
  /// input (Sequential: the first, and on up through modules without parameters or buffers;
  /// Concat: every branch), DataParallelTable to its replicas;
  /// clone() keeps it. It is not saved with the model.
  virtual void setGradInputNeeded(bool needed) { gradInputNeeded_ = needed; }
  /// Whether backward computes gradInput (setGradInputNeeded); true by default.
  bool gradInputNeeded() const { return gradInputNeeded_; }
  /// updateGradInput where gradInput is needed or this module has children (whose
  /// accGradParameters need the gradients inside it); otherwise gradInput, left empty.
  const Tensor& updateGradInputIfNeeded(const Tensor& input, const Tensor& gradOutput);
  /// The same on activities: updateGradInputActivity, or gradInputActivity() holding the empty
  /// gradInput.
  const Activity& updateGradInputIfNeeded(const Activity& input, const Activity& gradOutput);

  /// Whether this module can apply `next`, the module after it in a Sequential, in its own
  /// passes, so that the two run as one (a batch normalisation takes an in-place ReLU: Note
  /// [Batch normalisation, then ReLU] in nn/math/BatchNorm.h). None by default.
  virtual bool canTakeNext(const Module& next) const {
    (void)next;
    return false;
  }
  /// Sets (taken) or clears taking `next`'s passes, where canTakeNext(next): a Sequential sets
  /// it around the pair's passes and clears it after, so that each module alone is unchanged.
  virtual void takeNext(Module& next, bool taken) {
    (void)next;
    (void)taken;
  }

  /// Sets every gradient to zero.
  virtual void zeroGradParameters();
  /// parameter -= learningRate * gradient, for every parameter.
  virtual void updateParameters(float learningRate);
  /// All parameters and their gradients, in module order, weight before bias.
  std::pair<std::vector<Tensor>, std::vector<Tensor>> parameters();
  /// Appends what parameters() returns to two vectors (whose capacity a caller can reuse).
  virtual void collectParameters(std::vector<Tensor>& values, std::vector<Tensor>& gradients);
  /// Appends what buffers() returns.
  void collectBuffers(std::vector<Tensor>& values) const;
  /// One value buffer and one gradient buffer with identical offsets; every parameter (and
  /// gradient) becomes a view into them, a module used in two places once. A second call
  /// returns the same two tensors.
  virtual std::pair<Tensor, Tensor> getParameters();
  /// Every buffer of this module and those below it, in stateDict order.
  virtual std::vector<Tensor> buffers();
  /// Parameters and buffers under the names PyTorch gives the equivalent module's state
  /// dict ("0.weight", "7.bias", "running_mean").
  virtual std::vector<NamedTensor> stateDict();
  /// The parameters of stateDict(), in its order and under its names, each with its gradient
  /// (PyTorch's named_parameters; a DataParallelTable's are its first replica's).
  std::vector<NamedParameter> namedParameters();
  /// The buffers of stateDict(), in its order and under its names (PyTorch's named_buffers).
  std::vector<NamedTensor> namedBuffers();

  /// Puts this module and every module below it in training mode, the default (Torch7's
  /// training()): Dropout drops, BatchNormalization normalises by the batch's statistics and
  /// updates its running ones.
  virtual void training();
  /// Puts this module and every module below it in evaluation mode (Torch7's evaluate()):
  /// Dropout passes its input through, BatchNormalization uses its running statistics.
  virtual void evaluate();
  /// True in training mode (training()), false in evaluation mode (evaluate()).
  bool isTraining() const { return train_; }

  /// A deep copy: same type, configuration, parameters, gradients, buffers and mode. A module
  /// used in two places of the tree is copied once and used in the same two places of the copy.
  ModulePtr clone() const;
  /// Releases output, gradInput and intermediate buffers (they come back on next use).
  virtual void clearState();
  /// fn(*this), then apply(fn) on each child.
  virtual void apply(const std::function<void(Module&)>& fn);
  /// This module and all below it, depth first. The module must be held by a shared_ptr.
  std::vector<ModulePtr> listModules();
  /// Moves parameters, gradients and buffers of the whole tree to `device`, keeping
  /// tensors that shared storage (flattened parameters) sharing it there. Every module of the
  /// tree is asked first (checkMovable), so that a refusal leaves the whole tree where it was.
  /// Not virtual: a parent moves its children's tensors itself, without calling their to().
  void to(const Device& device);
  /// Throws an nn::Error if this module cannot go to `device` with its tree. Every module can
  /// but a DataParallelTable, whose replicas stay on the devices given to its add().
  virtual void checkMovable(const Device& device) const;
  /// Device of the first parameter or buffer; cpu:0 for a module without any.
  Device device();
  /// True when neither this module nor any below it has parameters or buffers.
  bool stateDictIsEmpty() const;

  /// "nn.Linear"
  virtual std::string typeName() const = 0;
  /// One line for leaves ("nn.Linear(800 -> 500)"), Torch7's block for containers.
  virtual std::string toString() const { return typeName(); }
  /// Constructor arguments, enough to rebuild the module with createModule().
  virtual Config config() const { return Config(); }
  /// Direct sub-modules, in order.
  virtual const std::vector<ModulePtr>& children() const;
  /// Whether the tensor passes take an input and a gradOutput of `dtype` (nn/tensor/DType.h):
  /// float32 only, in which every module computes; a container takes every type and leaves the
  /// check to its children, so that the error names the module that refuses.
  virtual bool takesElementType(DType dtype) const { return dtype == DType::Float32 || !children().empty(); }
  /// An nn::Error "nn.Linear(784 -> 10): input is bfloat16, this module computes in float32"
  /// unless takesElementType(t.dtype()); `what` names the tensor ("input", "gradOutput").
  void checkElementType(const Tensor& t, const char* what) const;
  /// Child i's part of stateDict names ("3" in "3.weight"): its index, unless its container
  /// named it (Container::add(name, module)); empty where the child's own names stand at this
  /// level, as if its tensors were this module's.
  virtual std::string childName(size_t index) const { return std::to_string(index); }

  /// The result of the last updateOutput (Torch7's `module.output`). The module's own tensor,
  /// resized and overwritten by the next forward (read or copy it before then); a few modules
  /// (Identity, View, Reshape, an in-place activation) make it share the input's storage where
  /// they can. Empty before the first forward and after clearState().
  Tensor output;
  /// The result of the last updateGradInput (Torch7's `module.gradInput`): dLoss/dInput, of the
  /// input's sizes, overwritten by the next backward. Empty before the first backward, after
  /// clearState(), and where gradInput is not needed (setGradInputNeeded(false)).
  Tensor gradInput;
  /// Time spent in this module's passes while profiling is on, recorded by the container that
  /// runs it (nn/core/Profiler.h).
  ModuleTimes profile;
  /// Lines that profileTable prints after its table, for the time this module spends beside its
  /// children's passes (a DataParallelTable's device threads, a DistributedDataParallelTable's
  /// waits for the other ranks); `step` is the caller's step time and its count of steps.
  /// Empty by default.
  virtual std::string profileDetail(const PassTime& /*step*/) const { return {}; }
  /// Zeroes what profileDetail reports; resetProfile calls it with `profile`'s reset.
  virtual void resetProfileDetail() {}

 protected:
  /// What backward runs: updateGradInputIfNeeded, then accGradParameters. A module that does
  /// the two passes better together overrides it (a DataParallelTable runs both on its devices
  /// in one round, as Torch7's does); what it returns and leaves must be what the two calls
  /// give, so that callers of the passes one by one see the same module.
  virtual const Tensor& backwardPasses(const Tensor& input, const Tensor& gradOutput, float scale);
  /// backwardPasses for activities: updateGradInputIfNeeded, then accGradParametersActivity.
  virtual const Activity& backwardPassesActivity(const Activity& input, const Activity& gradOutput, float scale);

  /// Declares a parameter and its gradient; the pointers are to members of this module.
  void registerParameter(const std::string& name, Tensor* value, Tensor* gradient);
  /// Declares state that is saved and moved but not trained (BatchNorm running statistics).
  void registerBuffer(const std::string& name, Tensor* value);
  /// Throws unless t lives on `expected`, naming this module.
  void checkDevice(const Tensor& t, const Device& expected, const char* what) const;
  /// Throws unless gradOutput has the sizes and device of `like` (the output it is the
  /// gradient of, or the input of a module whose output has the input's sizes), naming this
  /// module and both sizes.
  void checkGradOutput(const Tensor& like, const Tensor& gradOutput) const;
  /// Throws unless gradOutput has `sizes` (the output's for `input`) and the input's device,
  /// naming this module, the input and both sizes.
  void checkGradOutput(const Tensor& input, const std::vector<int64_t>& sizes, const Tensor& gradOutput) const;

  /// For modules that override the activity passes: keep `a` as the result (copied into
  /// the kept activity, which reuses its memory), and a tensor result also in output
  /// (gradInput); return the kept activity.
  const Activity& setOutput(const Activity& a);
  /// The same for the result of updateGradInputActivity: kept in gradInputActivity_, a tensor
  /// also in gradInput.
  const Activity& setGradInput(const Activity& a);
  /// Releases output and gradInput, and the activities that hold them (clearState's part for
  /// this module alone).
  void clearResults();
  /// input.tensor(), or an nn::Error naming this module and the table that came instead.
  const Tensor& tensorInput(const Activity& input, const char* what) const;
  /// input.table(), or an nn::Error naming this module and the tensor that came instead.
  const Table& tableInput(const Activity& input, const char* what) const;
  /// Throws unless `got` is alike `like` (sameShape), naming this module, `what` and both.
  void checkAlike(const Activity& like, const Activity& got, const char* what) const;

  /// Training mode (true, the default) or evaluation mode; set by training() and evaluate().
  bool train_ = true;
  /// What gradInputNeeded() returns; set by setGradInputNeeded().
  bool gradInputNeeded_ = true;
  /// What outputActivity() returns: for a module of tensors, a handle of output.
  Activity outputActivity_{output};
  /// What gradInputActivity() returns: for a module of tensors, a handle of gradInput.
  Activity gradInputActivity_{gradInput};

 private:
  struct Parameter {
    std::string name;
    Tensor* value;
    Tensor* gradient;
  };
  struct Buffer {
    std::string name;
    Tensor* value;
  };
  void copyLocalStateFrom(const Module& other);
  /// clone() below the generator's save: `copies` maps each module copied so far to its copy.
  ModulePtr cloneTree(std::unordered_map<const Module*, ModulePtr>& copies) const;
  std::vector<Tensor*> localTensors();

  const Tensor& forwardHooked(const Tensor& input);
  const Activity& forwardHooked(const Activity& input);

  std::vector<Parameter> parameters_;
  std::vector<Buffer> buffers_;
  // Null until a hook is registered.
  std::shared_ptr<ModuleHooks> hooks_;
  Tensor flatParameters_;
  Tensor flatGradients_;
};

/// True when `tensors` are, in order, contiguous back-to-back views covering all of `flat`.
bool isFlatView(const std::vector<Tensor>& tensors, const Tensor& flat);
/// Drops from `values`, and at the same places from `gradients`, each tensor listed a second
/// time (Tensor::is): parameters() lists a module used in two places once per place, and
/// getParameters, updateParameters and DataParallelTable hold, step and sum its tensors once.
void dropRepeatedParameters(std::vector<Tensor>& values, std::vector<Tensor>& gradients);

/// Rebuilds a module from its type name, configuration and (for containers) children.
using ModuleFactory = std::function<ModulePtr(const Config& config, std::vector<ModulePtr> children)>;
/// Makes `typeName` ("nn.Linear") known to createModule, built by `factory`; a second
/// registration of the name replaces the first. Thread-safe. NN_REGISTER_MODULE
/// (nn/core/Options.h) calls it at static initialisation.
void registerModuleType(const std::string& typeName, ModuleFactory factory);
/// A new module of the registered type `typeName`, built from `config` and, for a container,
/// `children` (what clone() and nn::load do). An nn::Error for a type never registered (its .cpp
/// not linked into the program), and the factory's for a config or children it refuses.
ModulePtr createModule(const std::string& typeName, const Config& config, std::vector<ModulePtr> children = {});
/// The type names registered so far, sorted ("nn.Linear", ...): what createModule and nn::load build.
std::vector<std::string> registeredModuleTypes();

/// A static object that registers a module type when the program starts (what NN_REGISTER_MODULE
/// defines in a module's .cpp).
struct ModuleRegistration {
  /// registerModuleType(typeName, factory).
  ModuleRegistration(const std::string& typeName, ModuleFactory factory) {
    registerModuleType(typeName, std::move(factory));
  }
};

/// Writes module.toString(): one line for a leaf, Torch7's block for a container.
std::ostream& operator<<(std::ostream& out, const Module& module);

}  // namespace nn
