// nn::ELU: y = x where x > 0, else alpha (e^x - 1); Torch7's nn.ELU([alpha], [inplace]).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ActivationModule.h"

namespace nn {

/// The arguments of ELU.
struct ELUOptions {
  /// The value y approaches as x goes to -infinity is -alpha; finite, and at least 0 in place. Default 1.
  float alpha = 1.f;
  /// Works in place (ActivationModule).
  bool inplace = false;

  template <typename F>
  void visit(F&& field) {
    field("alpha", alpha);
    field("inplace", inplace);
  }
};

/// Torch7's nn.ELU: x where x > 0, else alpha (e^x - 1).
class ELU : public WithOptions<ELUOptions, ActivationModule> {
 public:
  /// An ELU of `alpha`, in place where `inplace`.
  explicit ELU(float alpha = 1.f, bool inplace = false) : ELU(Options{alpha, inplace}) {}
  /// The module of `options`; an nn::Error unless alpha is finite, and at least 0 in place.
  explicit ELU(const Options& options);

  std::string typeName() const override { return "nn.ELU"; }
};

}  // namespace nn
