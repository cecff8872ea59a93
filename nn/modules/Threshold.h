// nn::Threshold: y = x where x > th, else v; Torch7's nn.Threshold([th], [v], [inplace]).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ActivationModule.h"

namespace nn {

struct ThresholdOptions {
  float threshold = 1e-6f;
  /// The value below and at the threshold; at most the threshold in place.
  float value = 0.f;
  /// Works in place (ActivationModule).
  bool inplace = false;

  template <typename F>
  void visit(F&& field) {
    field("threshold", threshold);
    field("value", value);
    field("inplace", inplace);
  }
};

class Threshold : public WithOptions<ThresholdOptions, ActivationModule> {
 public:
  explicit Threshold(float threshold = 1e-6f, float value = 0.f, bool inplace = false)
      : Threshold(Options{threshold, value, inplace}) {}
  explicit Threshold(const Options& options);

  std::string typeName() const override { return "nn.Threshold"; }
};

}  // namespace nn
