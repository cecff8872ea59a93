// nn::SoftPlus: log(1 + e^(beta x)) / beta, and x where beta x > threshold; Torch7's
// nn.SoftPlus([beta], [threshold]) with PyTorch's formulas (the backward reads the input).
// Not in place: the backward needs x.
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ActivationModule.h"

namespace nn {

/// The constructor arguments of nn::SoftPlus.
struct SoftPlusOptions {
  /// The sharpness: the output is log(1 + e^(beta x)) / beta; finite and greater than 0, 1 by default.
  float beta = 1.f;
  /// Above it (in beta x) the module is the identity, where log(1 + e^(beta x)) rounds to it;
  /// finite, 20 by default.
  float threshold = 20.f;

  template <typename F>
  void visit(F&& field) {
    field("beta", beta);
    field("threshold", threshold);
  }
};

/// A smooth ReLU, log(1 + e^(beta x)) / beta element-wise (Torch7's nn.SoftPlus, PyTorch's Softplus).
class SoftPlus : public WithOptions<SoftPlusOptions, ActivationModule> {
 public:
  /// As Torch7's nn.SoftPlus(beta, threshold); throws unless beta > 0 and both are finite.
  explicit SoftPlus(float beta = 1.f, float threshold = 20.f) : SoftPlus(Options{beta, threshold}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit SoftPlus(const Options& options);

  std::string typeName() const override { return "nn.SoftPlus"; }
};

}  // namespace nn
