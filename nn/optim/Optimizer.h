// nn::Optimizer: what nn::SGD, nn::Adam, nn::AdamW, nn::Adagrad and nn::RMSprop share. Each
// works over Module::getParameters(): one contiguous value buffer and one gradient buffer of the
// same size on one device, and each step runs there (ElementwiseKernels). Its state is a step count
// and named buffers of the parameters' size ("momentum", "adam.m", ...), empty until the first
// step that needs them; checkpoints save and restore both (nn/io/Checkpoint.h), so that a resumed
// run goes on bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nn/tensor/Tensor.h"

namespace nn {

namespace math {
struct AdamUpdate;
}

/// The base of the optimizers (Torch7's optim functions as objects): step() updates a module's flat
/// parameters from its flat gradients.
///
/// Built from Module::getParameters(), whose two buffers it shares as handles: Module::to moves them with
/// the module, and the next step moves the state buffers after them (one copy each); build the optimizer
/// once the tree is final (a changed tree gets new buffers from getParameters()).
/// The step only reads the gradients: zero them (Module::zeroGradParameters) before each backward.
/// Not copyable.
class Optimizer {
 public:
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  virtual ~Optimizer() = default;

  /// Updates the parameters from the current gradients (the gradient buffer is left as it
  /// was). Allocates only the state buffers, at the first step.
  virtual void step() = 0;
  /// The name of Torch7's optim function: "sgd", "adam", "adagrad", "rmsprop" ("adamw": PyTorch's
  /// AdamW); checkpoints record it.
  virtual std::string typeName() const = 0;
  /// The learning rate of its options (before Torch7's learningRateDecay, where it has one).
  virtual double learningRate() const = 0;
  /// Sets the learning rate of its options, as a schedule does between steps (nn/optim/LrScheduler.h).
  virtual void setLearningRate(double rate) = 0;
  /// The learning rate when the first schedule was made on this optimizer, which every schedule
  /// of it scales (PyTorch's param_group["initial_lr"]): learningRate() at the first call.
  double initialLearningRate() {
    if (initialLearningRate_ < 0) initialLearningRate_ = learningRate();
    return initialLearningRate_;
  }

  /// The steps taken (Torch7's state.t or state.evalCounter), which drive decays and bias
  /// corrections.
  int64_t stepCount() const { return stepCount_; }
  /// Sets the step count (a restored run's); a negative count is an nn::Error.
  void setStepCount(int64_t count);

  /// The state buffers by name, in a fixed order; empty where not yet made.
  const std::vector<std::pair<std::string, Tensor>>& state() const { return state_; }
  /// Restores the buffer `name` (copied in, any shape with the parameters' number of
  /// elements); an empty tensor forgets it, so that the next step starts it again.
  void setState(const std::string& name, const Tensor& value);

  /// The parameter buffer the steps update, contiguous (Module::getParameters().first, 1-D).
  const Tensor& parameters() const { return parameters_; }
  /// The flat gradient buffer the steps read (Module::getParameters().second), the parameters' size and device.
  const Tensor& gradients() const { return gradients_; }

 protected:
  /// module: the name errors give ("nn.Adam"); stateNames: the buffers of state().
  Optimizer(std::string module, std::pair<Tensor, Tensor> parameters, std::vector<std::string> stateNames);

  /// State buffer i, made the parameters' size and zeroed where it was empty; *created says
  /// whether it was.
  Tensor& stateBuffer(size_t i, bool* created = nullptr);
  /// "nn.Adam"
  const std::string& module() const { return module_; }
  // Note [Optimizer options]: one rule for every optimizer's options. A value is refused
  // where it has no meaning: NaN or infinite; beyond a float's range, which the step computes
  // in; below 0 for a learning rate, its decay (whose negative values divide by zero and
  // below), a weight decay or an epsilon; outside [0, 1] for a momentum, a dampening or a
  // smoothing constant ([0, 1) for Adam's betas). Each optimizer checks its options with these
  // at construction and before every step, as they may be changed between steps.

  /// Throws "nn.Adam: expected a learning rate >= 0, got nan" unless value is finite, >= 0 and
  /// at most a float's largest value.
  void checkNonNegative(const char* what, double value) const;
  /// Throws "nn.SGD: expected a momentum in [0, 1], got -1" unless value is in [0, 1], or in
  /// [0, 1) where `oneIncluded` is false.
  void checkFraction(const char* what, double value, bool oneIncluded = true) const;
  /// Adam's and AdamW's options, checked alike: the learning rate, its decay, the epsilon and
  /// the weight decay at least 0, the betas in [0, 1).
  void checkAdamOptions(double learningRate, double learningRateDecay, double beta1, double beta2, double epsilon,
                        double weightDecay) const;
  /// Adam's and AdamW's update of every element (state buffers 0 and 1 the moments): `update`'s
  /// step size, divisor, shrink and weight decay as the caller set them, its betas and epsilon
  /// from these; then the step count grows by 1.
  void adamStep(math::AdamUpdate& update, double beta1, double beta2, double epsilon);

  /// The parameter buffer; a handle that shares the module's storage.
  Tensor parameters_;
  /// The gradient buffer; a handle that shares the module's storage.
  Tensor gradients_;
  /// The steps taken; a subclass's step() adds 1 after its update.
  int64_t stepCount_ = 0;

 private:
  std::string module_;
  std::vector<std::pair<std::string, Tensor>> state_;
  double initialLearningRate_ = -1;  // none yet
};

}  // namespace nn
