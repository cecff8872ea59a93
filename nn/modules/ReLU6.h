// nn::ReLU6: x clamped to [0, 6], HardTanh(0, 6); Torch7's nn.ReLU6([inplace]).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ActivationModule.h"

namespace nn {

/// The constructor arguments of nn::ReLU6.
struct ReLU6Options {
  /// Works in place (ActivationModule).
  bool inplace = false;

  template <typename F>
  void visit(F&& field) {
    field("inplace", inplace);
  }
};

/// min(max(0, x), 6) element-wise (Torch7's nn.ReLU6, PyTorch's ReLU6).
class ReLU6 : public WithOptions<ReLU6Options, ActivationModule> {
 public:
  /// In place where `inplace`, as Torch7's nn.ReLU6(true).
  explicit ReLU6(bool inplace = false) : ReLU6(Options{inplace}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit ReLU6(const Options& options);

  std::string typeName() const override { return "nn.ReLU6"; }
};

}  // namespace nn
