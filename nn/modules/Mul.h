// nn::Mul: y = w x with one learned scalar w (Torch7's Mul).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/BroadcastParameterModule.h"

namespace nn {

/// The arguments of Mul: none.
struct MulOptions {
  template <typename F>
  void visit(F&&) {}
};

/// Torch7's nn.Mul: the input times one learned scalar.
class Mul : public WithOptions<MulOptions, BroadcastParameterModule> {
 public:
  Mul() : Mul(Options{}) {}
  /// The same as Mul(): MulOptions has no fields.
  explicit Mul(const Options& options);

  std::string typeName() const override { return "nn.Mul"; }
  std::string toString() const override { return typeName(); }

  /// w, [1]; starts uniform in [-1, 1].
  Tensor& weight = parameter_;
  /// Gradient of the loss with respect to w, [1]: the sum of gradOutput * input, accumulated (times scale) by
  /// accGradParameters; zeroed by zeroGradParameters.
  Tensor& gradWeight = gradParameter_;
};

}  // namespace nn
