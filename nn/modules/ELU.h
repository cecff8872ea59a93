// nn::ELU: y = x where x > 0, else alpha (e^x - 1); Torch7's nn.ELU([alpha], [inplace]).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ActivationModule.h"

namespace nn {

struct ELUOptions {
  /// The value y approaches as x goes to -infinity is -alpha; at least 0 in place.
  float alpha = 1.f;
  /// Works in place (ActivationModule).
  bool inplace = false;

  template <typename F>
  void visit(F&& field) {
    field("alpha", alpha);
    field("inplace", inplace);
  }
};

class ELU : public WithOptions<ELUOptions, ActivationModule> {
 public:
  explicit ELU(float alpha = 1.f, bool inplace = false) : ELU(Options{alpha, inplace}) {}
  explicit ELU(const Options& options);

  std::string typeName() const override { return "nn.ELU"; }
};

}  // namespace nn
