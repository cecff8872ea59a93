// nn::SGD: stochastic gradient descent over a module's flat parameter and gradient buffers,
// step for step Torch7's optim.sgd (learning rate decay, weight decay, momentum, dampening,
// Nesterov momentum).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "nn/optim/Optimizer.h"

namespace nn {

/// Torch7's optim.sgd configuration, with its defaults.
struct SgdOptions {
  /// The step size, before decay (default 1e-3, Torch7's).
  float learningRate = 1e-3f;
  /// The step k (counted from 0) uses learningRate / (1 + k * learningRateDecay).
  float learningRateDecay = 0;
  /// Adds weightDecay * x to the gradient.
  float weightDecay = 0;
  /// The velocity's decay, in [0, 1]; 0 for none. With d the gradient plus weight decay, the velocity is
  /// v = momentum v + (1 - dampening) d (v = d at the first step) and the step x -= lr v
  /// (with nesterov, x -= lr (d + momentum v)).
  float momentum = 0;
  /// Unset means equal to momentum, as in Torch7 (`config.dampening or mom`); PyTorch's
  /// torch.optim.SGD defaults it to 0 instead, so set it to 0 to reproduce PyTorch.
  std::optional<float> dampening;
  /// Needs momentum > 0 and dampening 0 (Torch7 asserts it).
  bool nesterov = false;
};

/// Torch7's optim.sgd as an nn::Optimizer (PyTorch's torch.optim.SGD where options().dampening is 0).
class SGD : public Optimizer {
 public:
  /// Over Module::getParameters() (see nn::Optimizer).
  explicit SGD(std::pair<Tensor, Tensor> parameters, SgdOptions options = {});

  /// Torch7 adds the weight decay into the gradient buffer; this leaves it as it was.
  void step() override;
  std::string typeName() const override { return "sgd"; }
  /// The options' float, as a double (a schedule's rate is rounded to a float when set).
  double learningRate() const override { return options_.learningRate; }
  void setLearningRate(double rate) override { options_.learningRate = static_cast<float>(rate); }

  /// May be changed between steps (a learning rate schedule).
  SgdOptions& options() { return options_; }
  /// The options, read-only.
  const SgdOptions& options() const { return options_; }
  /// The dampening the steps use: options().dampening, or the momentum when unset.
  float dampening() const;
  /// The learning rate of the next step, after decay.
  float currentLearningRate() const;

  /// Torch7's state.dfdx: the velocity (state "momentum"), empty until the first step with
  /// momentum.
  const Tensor& momentumBuffer() const { return state()[0].second; }
  /// Restores a saved velocity (copied in). An empty tensor forgets the velocity, so that the
  /// next step starts it again from the gradient.
  void setMomentumBuffer(const Tensor& buffer) { setState("momentum", buffer); }

 private:
  void checkOptions() const;

  SgdOptions options_;
};

}  // namespace nn
