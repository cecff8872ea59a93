// nn::LeakyReLU: y = x where x > 0, else negval x; Torch7's nn.LeakyReLU([negval], [inplace]).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ActivationModule.h"

namespace nn {

struct LeakyReLUOptions {
  /// The slope below 0; at least 0 in place.
  float negval = 0.01f;
  /// Works in place (ActivationModule).
  bool inplace = false;

  template <typename F>
  void visit(F&& field) {
    field("negval", negval);
    field("inplace", inplace);
  }
};

class LeakyReLU : public WithOptions<LeakyReLUOptions, ActivationModule> {
 public:
  explicit LeakyReLU(float negval = 0.01f, bool inplace = false) : LeakyReLU(Options{negval, inplace}) {}
  explicit LeakyReLU(const Options& options);

  std::string typeName() const override { return "nn.LeakyReLU"; }
};

}  // namespace nn
