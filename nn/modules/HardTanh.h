// nn::HardTanh: x clamped to [min, max]; Torch7's nn.HardTanh([min_value], [max_value], [inplace]).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ActivationModule.h"

namespace nn {

struct HardTanhOptions {
  /// min < max.
  float min = -1.f;
  float max = 1.f;
  /// Works in place (ActivationModule).
  bool inplace = false;

  template <typename F>
  void visit(F&& field) {
    field("min", min);
    field("max", max);
    field("inplace", inplace);
  }
};

class HardTanh : public WithOptions<HardTanhOptions, ActivationModule> {
 public:
  explicit HardTanh(float min = -1.f, float max = 1.f, bool inplace = false) : HardTanh(Options{min, max, inplace}) {}
  explicit HardTanh(const Options& options);

  std::string typeName() const override { return "nn.HardTanh"; }
};

}  // namespace nn
