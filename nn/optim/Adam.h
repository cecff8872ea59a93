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
  double learningRate = 1e-3;
  /// The step k (counted from 0) uses learningRate / (1 + k * learningRateDecay) (Torch7's;
  /// PyTorch's Adam has none).
  double learningRateDecay = 0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  /// Adds weightDecay * x to the gradient (L2, as both Torch7 and PyTorch's Adam; not AdamW).
  double weightDecay = 0;
  /// Where epsilon goes. Torch7: x -= lr sqrt(1 - beta2^t) / (1 - beta1^t) m / (sqrt(v) + eps);
  /// PyTorch: x -= lr / (1 - beta1^t) m / (sqrt(v) / sqrt(1 - beta2^t) + eps), so that eps
  /// meets the bias-corrected sqrt(v). They differ where sqrt(v) is near eps: true gives
  /// PyTorch's.
  bool pytorchEpsilon = false;
};

class Adam : public Optimizer {
 public:
  explicit Adam(std::pair<Tensor, Tensor> parameters, AdamOptions options = {});

  /// Allocates its two buffers ("adam.m", "adam.v": Torch7's state.m and state.v) at the first
  /// step, nothing after.
  void step() override;
  std::string typeName() const override { return "adam"; }

  /// May be changed between steps.
  AdamOptions& options() { return options_; }
  const AdamOptions& options() const { return options_; }

 private:
  void checkOptions() const;

  AdamOptions options_;
};

}  // namespace nn
