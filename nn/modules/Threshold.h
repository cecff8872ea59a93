// nn::Threshold: y = x where x > th, else v; Torch7's nn.Threshold([th], [v], [inplace]).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ActivationModule.h"

namespace nn {

/// The constructor arguments of nn::Threshold.
struct ThresholdOptions {
  /// The threshold (Torch7's th): inputs above it pass unchanged; finite, 1e-6 by default.
  float threshold = 1e-6f;
  /// The value below and at the threshold (Torch7's v); finite, at most the threshold in place; 0 by default.
  float value = 0.f;
  /// Works in place (ActivationModule), as Torch7's ip.
  bool inplace = false;

  template <typename F>
  void visit(F&& field) {
    field("threshold", threshold);
    field("value", value);
    field("inplace", inplace);
  }
};

/// Torch7's nn.Threshold (PyTorch's Threshold): x above the threshold, else a constant value.
class Threshold : public WithOptions<ThresholdOptions, ActivationModule> {
 public:
  /// As Torch7's nn.Threshold(th, v, ip); throws unless both are finite and, in place, value <= threshold.
  explicit Threshold(float threshold = 1e-6f, float value = 0.f, bool inplace = false)
      : Threshold(Options{threshold, value, inplace}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit Threshold(const Options& options);

  std::string typeName() const override { return "nn.Threshold"; }
};

}  // namespace nn
