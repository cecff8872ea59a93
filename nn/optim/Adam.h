// nn::Adam: Torch7's optim.adam (Kingma and Ba), step for step, over a module's flat parameter
// and gradient buffers (see nn::Optimizer). With options().pytorchEpsilon it is PyTorch's
// torch.optim.Adam instead (below).
#pragma once

#include <utility>

#include "nn/optim/Optimizer.h"

namespace nn {

/// Torch7's optim.adam configuration, with its defaults. Doubles, as Torch7's Lua numbers and
/// PyTorch's Python floats: a step's constants are computed in double and rounded to float once.
struct AdamOptions {
  /// The step size, before decay and bias corrections.
  double learningRate = 1e-3;
  /// The step k (counted from 0) uses learningRate / (1 + k * learningRateDecay) (Torch7's;
  /// PyTorch's Adam has none).
  double learningRateDecay = 0;
  /// The decay of the mean of the gradients (m), in [0, 1).
  double beta1 = 0.9;
  /// The decay of the mean of the squared gradients (v), in [0, 1).
  double beta2 = 0.999;
  /// Added to the denominator for stability (where, see pytorchEpsilon).
  double epsilon = 1e-8;
  /// Adds weightDecay * x to the gradient (L2, as both Torch7 and PyTorch's Adam; not AdamW).
  double weightDecay = 0;
  /// Where epsilon goes. Torch7: x -= lr sqrt(1 - beta2^t) / (1 - beta1^t) m / (sqrt(v) + eps);
  /// PyTorch: x -= lr / (1 - beta1^t) m / (sqrt(v) / sqrt(1 - beta2^t) + eps), so that eps
  /// meets the bias-corrected sqrt(v). They differ where sqrt(v) is near eps: true gives
  /// PyTorch's.
  bool pytorchEpsilon = false;
};

/// Torch7's optim.adam (or PyTorch's torch.optim.Adam, with pytorchEpsilon) as an nn::Optimizer.
class Adam : public Optimizer {
 public:
  /// Over Module::getParameters() (see nn::Optimizer); an option out of range is an nn::Error.
  explicit Adam(std::pair<Tensor, Tensor> parameters, AdamOptions options = {});

  /// Allocates its two buffers ("adam.m", "adam.v": Torch7's state.m and state.v) at the first
  /// step, nothing after.
  void step() override;
  std::string typeName() const override { return "adam"; }
  double learningRate() const override { return options_.learningRate; }
  void setLearningRate(double rate) override { options_.learningRate = rate; }

  /// May be changed between steps.
  AdamOptions& options() { return options_; }
  /// The options, read-only.
  const AdamOptions& options() const { return options_; }

 private:
  void checkOptions() const;

  AdamOptions options_;
};

}  // namespace nn
