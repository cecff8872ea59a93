// nn::GELU: y = x Phi(x), Phi the standard normal's distribution function, element-wise
// (PyTorch's nn.GELU(approximate)): exact through erf, or PyTorch's tanh approximation. The
// backward reads the input.
#pragma once

#include <string>
#include <utility>

#include "nn/core/Options.h"
#include "nn/modules/ActivationModule.h"

namespace nn {

/// The arguments of GELU.
struct GELUOptions {
  /// Which form, as PyTorch names them: "none", 0.5 x (1 + erf(x / sqrt 2)) (the default), or
  /// "tanh", 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). Saved with the module, so that a
  /// model loads with the form it was trained with.
  std::string approximate = "none";

  template <typename F>
  void visit(F&& field) {
    field("approximate", approximate);
  }
};

/// PyTorch's nn.GELU: x Phi(x) element-wise, exact or approximated through tanh; never in place, as
/// its backward reads x.
class GELU : public WithOptions<GELUOptions, ActivationModule> {
 public:
  /// A GELU of the form `approximate`, "none" or "tanh" (PyTorch's nn.GELU(approximate=...)).
  explicit GELU(std::string approximate = "none") : GELU(Options{std::move(approximate)}) {}
  /// The module of `options`; an nn::Error for an approximate other than "none" and "tanh".
  explicit GELU(const Options& options);

  std::string typeName() const override { return "nn.GELU"; }
};

}  // namespace nn
