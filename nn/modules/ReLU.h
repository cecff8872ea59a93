// nn::ReLU: y = max(0, x); Torch7's nn.ReLU([inplace]).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ActivationModule.h"

namespace nn {

struct ReLUOptions {
  /// Works in place (ActivationModule), as Torch7's nn.ReLU(true).
  bool inplace = false;

  template <typename F>
  void visit(F&& field) {
    // Files written before in-place ReLU existed have no such entry.
    field("inplace", inplace, DefaultIfAbsent{});
  }
};

class ReLU : public WithOptions<ReLUOptions, ActivationModule> {
 public:
  explicit ReLU(bool inplace = false) : ReLU(Options{inplace}) {}
  explicit ReLU(const Options& options);

  std::string typeName() const override { return "nn.ReLU"; }
  /// "nn.ReLU", or "nn.ReLU(true)" in place, as Torch7 prints them.
  std::string toString() const override;
};

}  // namespace nn
