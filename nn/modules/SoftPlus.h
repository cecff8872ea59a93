// nn::SoftPlus: log(1 + e^(beta x)) / beta, and x where beta x > threshold; Torch7's
// nn.SoftPlus([beta], [threshold]) with PyTorch's formulas (the backward reads the input).
// Not in place: the backward needs x.
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ActivationModule.h"

namespace nn {

struct SoftPlusOptions {
  /// Greater than 0.
  float beta = 1.f;
  /// Above it (in beta x) the module is the identity, where log(1 + e^(beta x)) rounds to it.
  float threshold = 20.f;

  template <typename F>
  void visit(F&& field) {
    field("beta", beta);
    field("threshold", threshold);
  }
};

class SoftPlus : public WithOptions<SoftPlusOptions, ActivationModule> {
 public:
  explicit SoftPlus(float beta = 1.f, float threshold = 20.f) : SoftPlus(Options{beta, threshold}) {}
  explicit SoftPlus(const Options& options);

  std::string typeName() const override { return "nn.SoftPlus"; }
};

}  // namespace nn
