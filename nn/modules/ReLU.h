// nn::ReLU: y = max(0, x); Torch7's nn.ReLU([inplace]).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ActivationModule.h"

namespace nn {

/// The constructor arguments of nn::ReLU.
struct ReLUOptions {
  /// Works in place (ActivationModule), as Torch7's nn.ReLU(true).
  bool inplace = false;

  template <typename F>
  void visit(F&& field) {
    // Files written before in-place ReLU existed have no such entry.
    field("inplace", inplace, DefaultIfAbsent{});
  }
};

/// Rectified linear unit, max(0, x) element-wise (Torch7's nn.ReLU, PyTorch's ReLU).
class ReLU : public WithOptions<ReLUOptions, ActivationModule> {
 public:
  /// In place where `inplace`, as Torch7's nn.ReLU(true).
  explicit ReLU(bool inplace = false) : ReLU(Options{inplace}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit ReLU(const Options& options);

  std::string typeName() const override { return "nn.ReLU"; }
  /// "nn.ReLU", or "nn.ReLU(true)" in place, as Torch7 prints them.
  std::string toString() const override;
};

}  // namespace nn
