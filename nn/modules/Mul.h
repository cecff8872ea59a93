// nn::Mul: y = w x with one learned scalar w (Torch7's Mul).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/BroadcastParameterModule.h"

namespace nn {

struct MulOptions {
  template <typename F>
  void visit(F&&) {}
};

class Mul : public WithOptions<MulOptions, BroadcastParameterModule> {
 public:
  Mul() : Mul(Options{}) {}
  explicit Mul(const Options& options);

  std::string typeName() const override { return "nn.Mul"; }
  std::string toString() const override { return typeName(); }

  /// [1]
  Tensor& weight = parameter_;
  Tensor& gradWeight = gradParameter_;
};

}  // namespace nn
