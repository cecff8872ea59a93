// nn::RMSprop: Torch7's optim.rmsprop (Tieleman and Hinton), step for step, over a module's
// flat parameter and gradient buffers (see nn::Optimizer); the same formula and defaults as
// PyTorch's torch.optim.RMSprop without momentum or centring.
#pragma once

#include <utility>

#include "nn/optim/Optimizer.h"

namespace nn {

/// Torch7's optim.rmsprop configuration, with its defaults (doubles, as in nn::AdamOptions).
struct RmspropOptions {
  /// The step size (no decay, as Torch7's).
  double learningRate = 1e-2;
  /// The smoothing constant of the mean of the squared gradients.
  double alpha = 0.99;
  /// Added to sqrt of the mean square, for stability.
  double epsilon = 1e-8;
  /// Adds weightDecay * x to the gradient (L2).
  double weightDecay = 0;
  /// The mean square's value before the first step (Torch7's config.initialMean); at least 0.
  double initialMean = 0;
};

/// Torch7's optim.rmsprop (PyTorch's torch.optim.RMSprop without momentum) as an nn::Optimizer.
class RMSprop : public Optimizer {
 public:
  /// Over Module::getParameters() (see nn::Optimizer); an option out of range is an nn::Error.
  explicit RMSprop(std::pair<Tensor, Tensor> parameters, RmspropOptions options = {});

  /// Allocates its buffer ("rmsprop.square_avg": Torch7's state.m) at the first step, nothing
  /// after.
  void step() override;
  std::string typeName() const override { return "rmsprop"; }
  double learningRate() const override { return options_.learningRate; }
  void setLearningRate(double rate) override { options_.learningRate = rate; }

  /// The options; may be changed between steps (checked at the next one).
  RmspropOptions& options() { return options_; }
  /// The options, read-only.
  const RmspropOptions& options() const { return options_; }

 private:
  void checkOptions() const;

  RmspropOptions options_;
};

}  // namespace nn
