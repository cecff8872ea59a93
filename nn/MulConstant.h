// nn::MulConstant: y = constant * x, and gradInput = constant * gradOutput; Torch7's
// nn.MulConstant(constant_scalar), not in place.
#pragma once

#include "nn/Module.h"
#include "nn/Options.h"

namespace nn {

struct MulConstantOptions {
  /// A finite number.
  float constant = 1.f;

  template <typename F>
  void visit(F&& field) {
    field("constant", constant);
  }
};

class MulConstant : public WithOptions<MulConstantOptions> {
 public:
  explicit MulConstant(float constant) : MulConstant(Options{constant}) {}
  explicit MulConstant(const Options& options);

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  std::string typeName() const override { return "nn.MulConstant"; }
};

}  // namespace nn
