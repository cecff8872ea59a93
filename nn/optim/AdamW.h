// nn::AdamW: PyTorch's torch.optim.AdamW (Loshchilov and Hutter), step for step, over a module's
// flat parameter and gradient buffers (see nn::Optimizer): Adam with PyTorch's place of epsilon
// and its weight decay decoupled from the gradient, x shrunk by 1 - lr weightDecay each step.
#pragma once

#include <utility>

#include "nn/optim/Optimizer.h"

namespace nn {

/// torch.optim.AdamW's configuration, with its defaults (doubles, as in nn::AdamOptions). Without
/// amsgrad (PyTorch's default, false), as nn::Adam.
struct AdamWOptions {
  /// The step size, before decay and bias corrections; it scales the weight decay too.
  double learningRate = 1e-3;
  /// The step k (counted from 0) uses learningRate / (1 + k * learningRateDecay), as Torch7's
  /// optim.adam; 0, PyTorch's, by default (a schedule changes the rate there).
  double learningRateDecay = 0;
  /// The decay of the mean of the gradients (m), in [0, 1).
  double beta1 = 0.9;
  /// The decay of the mean of the squared gradients (v), in [0, 1).
  double beta2 = 0.999;
  /// Added to the bias-corrected sqrt(v), for stability (PyTorch's place: AdamOptions::pytorchEpsilon).
  double epsilon = 1e-8;
  /// Each step first multiplies x by 1 - learningRate * weightDecay, apart from the gradient and
  /// its moments (not Adam's L2 term). PyTorch's default, 1e-2.
  double weightDecay = 1e-2;
};

/// PyTorch's torch.optim.AdamW as an nn::Optimizer.
class AdamW : public Optimizer {
 public:
  /// Over Module::getParameters() (see nn::Optimizer); an option out of range is an nn::Error.
  explicit AdamW(std::pair<Tensor, Tensor> parameters, AdamWOptions options = {});

  /// Allocates its two buffers ("adamw.m", "adamw.v": PyTorch's exp_avg and exp_avg_sq) at the
  /// first step, nothing after.
  void step() override;
  std::string typeName() const override { return "adamw"; }
  double learningRate() const override { return options_.learningRate; }
  void setLearningRate(double rate) override { options_.learningRate = rate; }

  /// May be changed between steps.
  AdamWOptions& options() { return options_; }
  /// The options, read-only.
  const AdamWOptions& options() const { return options_; }

 private:
  void checkOptions() const;

  AdamWOptions options_;
};

}  // namespace nn
