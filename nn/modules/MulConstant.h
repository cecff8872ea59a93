// nn::MulConstant: y = constant * x, and gradInput = constant * gradOutput; Torch7's
// nn.MulConstant(constant_scalar, inplace). In place, as Torch7's: forward scales the input
// itself and the output shares it; updateGradInput scales gradOutput itself, which gradInput
// shares, and then gives the input back its values, scaled by 1 / constant (a rounding from
// where they were, as Torch7's division). In place takes contiguous tensors and a nonzero
// constant.
#pragma once

#include "nn/core/Module.h"
#include "nn/core/Options.h"

namespace nn {

/// The arguments of MulConstant.
struct MulConstantOptions {
  /// The factor (Torch7's constant_scalar). A finite number, and not 0 in place.
  float constant = 1.f;
  /// Scales the input itself, which the output shares, and gradOutput itself, which gradInput shares, then
  /// scales the input back by 1 / constant; needs contiguous tensors. Default false; files written without it
  /// load as false.
  bool inplace = false;

  template <typename F>
  void visit(F&& field) {
    field("constant", constant);
    field("inplace", inplace, DefaultIfAbsent{});
  }
};

/// Torch7's nn.MulConstant: the input times a fixed number.
class MulConstant : public WithOptions<MulConstantOptions> {
 public:
  /// Multiplies by `constant`, in place where `inplace`.
  explicit MulConstant(float constant, bool inplace = false) : MulConstant(Options{constant, inplace}) {}
  /// The module of `options`; an nn::Error unless the constant is finite, and not 0 in place.
  explicit MulConstant(const Options& options);

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  std::string typeName() const override { return "nn.MulConstant"; }
  /// "nn.MulConstant(constant=0.5)", then ", inplace" where in place.
  std::string toString() const override;
};

}  // namespace nn
