// nn::HardTanh: x clamped to [min, max]; Torch7's nn.HardTanh([min_value], [max_value], [inplace]).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ActivationModule.h"

namespace nn {

/// The arguments of HardTanh.
struct HardTanhOptions {
  /// The lower bound (Torch7's min_value); finite, min < max. Default -1.
  float min = -1.f;
  /// The upper bound (Torch7's max_value); finite, greater than min. Default 1.
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

/// Torch7's nn.HardTanh: x clamped to [min, max].
class HardTanh : public WithOptions<HardTanhOptions, ActivationModule> {
 public:
  /// Clamps to [min, max], in place where `inplace`.
  explicit HardTanh(float min = -1.f, float max = 1.f, bool inplace = false) : HardTanh(Options{min, max, inplace}) {}
  /// The module of `options`; an nn::Error unless min and max are finite and min < max.
  explicit HardTanh(const Options& options);

  std::string typeName() const override { return "nn.HardTanh"; }
};

}  // namespace nn
