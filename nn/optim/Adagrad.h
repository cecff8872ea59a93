// nn::Adagrad: Torch7's optim.adagrad (Duchi et al.), step for step, over a module's flat
// parameter and gradient buffers (see nn::Optimizer); the same formula as PyTorch's
// torch.optim.Adagrad, whose default learning rate is 1e-2 where Torch7's is 1e-3.
#pragma once

#include <utility>

#include "nn/optim/Optimizer.h"

namespace nn {

/// Torch7's optim.adagrad configuration, with its defaults (doubles, as in nn::AdamOptions).
struct AdagradOptions {
  /// The step size, before decay (Torch7's default; PyTorch's is 1e-2).
  double learningRate = 1e-3;
  /// The step k (counted from 0) uses learningRate / (1 + k * learningRateDecay).
  double learningRateDecay = 0;
  /// Adds weightDecay * x to the gradient (L2).
  double weightDecay = 0;
  /// Added to sqrt of the sum of squares (Torch7 fixes it at 1e-10, PyTorch's default).
  double epsilon = 1e-10;
};

/// Torch7's optim.adagrad (PyTorch's torch.optim.Adagrad) as an nn::Optimizer.
class Adagrad : public Optimizer {
 public:
  /// Over Module::getParameters() (see nn::Optimizer); an option out of range is an nn::Error.
  explicit Adagrad(std::pair<Tensor, Tensor> parameters, AdagradOptions options = {});

  /// Allocates its buffer ("adagrad.sum": Torch7's state.paramVariance, the sum of the squared
  /// gradients) at the first step, nothing after.
  void step() override;
  std::string typeName() const override { return "adagrad"; }
  double learningRate() const override { return options_.learningRate; }
  void setLearningRate(double rate) override { options_.learningRate = rate; }

  /// The options; may be changed between steps (checked at the next one).
  AdagradOptions& options() { return options_; }
  /// The options, read-only.
  const AdagradOptions& options() const { return options_; }

 private:
  void checkOptions() const;

  AdagradOptions options_;
};

}  // namespace nn
