// nn::AddConstant: y = x + constant, and gradInput is gradOutput, shared as Identity shares it;
// Torch7's nn.AddConstant(constant_scalar, inplace). In place, as Torch7's: forward adds to the
// input itself and the output shares it; updateGradInput gives the input back its values by
// adding -constant (a rounding from where they were, as in Torch7). In place takes a contiguous
// input.
#pragma once

#include "nn/core/Module.h"
#include "nn/core/Options.h"

namespace nn {

/// The arguments of AddConstant.
struct AddConstantOptions {
  /// The number added to every element (Torch7's constant_scalar). A finite number.
  float constant = 0.f;
  /// Adds to the input itself, which the output then shares, and subtracts the constant from it again in
  /// updateGradInput; needs a contiguous input. Default false; files written without it load as false.
  bool inplace = false;

  template <typename F>
  void visit(F&& field) {
    field("constant", constant);
    field("inplace", inplace, DefaultIfAbsent{});
  }
};

/// Torch7's nn.AddConstant: adds a fixed number to every element.
class AddConstant : public WithOptions<AddConstantOptions> {
 public:
  /// Adds `constant`, in place where `inplace`.
  explicit AddConstant(float constant, bool inplace = false) : AddConstant(Options{constant, inplace}) {}
  /// The module of `options`; an nn::Error unless the constant is finite.
  explicit AddConstant(const Options& options);

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  std::string typeName() const override { return "nn.AddConstant"; }
  /// "nn.AddConstant(constant=0.5)", then ", inplace" where in place.
  std::string toString() const override;
  void clearState() override;

 private:
  Tensor contiguousInput_;  // a strided input's contiguous copy
  Tensor constants_;        // in place: the constant in every element, added to the input
};

}  // namespace nn
