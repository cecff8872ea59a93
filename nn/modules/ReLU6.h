// nn::ReLU6: x clamped to [0, 6], HardTanh(0, 6); Torch7's nn.ReLU6([inplace]).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ActivationModule.h"

namespace nn {

struct ReLU6Options {
  /// Works in place (ActivationModule).
  bool inplace = false;

  template <typename F>
  void visit(F&& field) {
    field("inplace", inplace);
  }
};

class ReLU6 : public WithOptions<ReLU6Options, ActivationModule> {
 public:
  explicit ReLU6(bool inplace = false) : ReLU6(Options{inplace}) {}
  explicit ReLU6(const Options& options);

  std::string typeName() const override { return "nn.ReLU6"; }
};

}  // namespace nn
