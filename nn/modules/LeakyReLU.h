// nn::LeakyReLU: y = x where x > 0, else negval x; Torch7's nn.LeakyReLU([negval], [inplace]).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ActivationModule.h"

namespace nn {

/// The arguments of LeakyReLU.
struct LeakyReLUOptions {
  /// The slope below 0; finite, and at least 0 in place. Default 0.01.
  float negval = 0.01f;
  /// Works in place (ActivationModule).
  bool inplace = false;

  template <typename F>
  void visit(F&& field) {
    field("negval", negval);
    field("inplace", inplace);
  }
};

/// Torch7's nn.LeakyReLU: x where x > 0, else negval * x.
class LeakyReLU : public WithOptions<LeakyReLUOptions, ActivationModule> {
 public:
  /// A slope of `negval` below 0, in place where `inplace`.
  explicit LeakyReLU(float negval = 0.01f, bool inplace = false) : LeakyReLU(Options{negval, inplace}) {}
  /// The module of `options`; an nn::Error unless negval is finite, and at least 0 in place.
  explicit LeakyReLU(const Options& options);

  std::string typeName() const override { return "nn.LeakyReLU"; }
};

}  // namespace nn
