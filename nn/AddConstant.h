// nn::AddConstant: y = x + constant, and gradInput is gradOutput, shared as Identity shares it;
// Torch7's nn.AddConstant(constant_scalar), not in place.
#pragma once

#include "nn/Module.h"
#include "nn/Options.h"

namespace nn {

struct AddConstantOptions {
  /// A finite number.
  float constant = 0.f;

  template <typename F>
  void visit(F&& field) {
    field("constant", constant);
  }
};

class AddConstant : public WithOptions<AddConstantOptions> {
 public:
  explicit AddConstant(float constant) : AddConstant(Options{constant}) {}
  explicit AddConstant(const Options& options);

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  std::string typeName() const override { return "nn.AddConstant"; }
  void clearState() override;

 private:
  Tensor contiguousInput_;  // a strided input's contiguous copy
};

}  // namespace nn
