// nn::PReLU: y = x where x > 0, else a x, with a learned slope a per plane (Torch7's
// PReLU(nOutputPlane), PyTorch's PReLU(num_parameters)), or one slope shared by all elements
// where nOutputPlane is 0. The planes are dimension 1 of an input of two dimensions or more
// ([N, C, ...]), dimension 0 of a vector. Slopes start at 0.25. The passes are BroadcastKernels'
// (nn/math/Broadcast.h's PReLU operations).
#pragma once

#include <vector>

#include "nn/core/Options.h"
#include "nn/modules/BroadcastShape.h"

namespace nn {

struct PReLUOptions {
  int64_t nOutputPlane = 0;

  template <typename F>
  void visit(F&& field) {
    field("nOutputPlane", nOutputPlane);
  }
};

class PReLU : public WithOptions<PReLUOptions> {
 public:
  explicit PReLU(int64_t nOutputPlane = 0) : PReLU(Options{nOutputPlane}) {}
  explicit PReLU(const Options& options);

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;
  void clearState() override;

  std::string typeName() const override { return "nn.PReLU"; }

  /// [nOutputPlane], or [1] where it is 0.
  Tensor weight, gradWeight;

 private:
  // The slopes' broadcasting against `input`, checked, naming the module.
  const BroadcastShape& broadcastingFor(const Tensor& input);

  std::vector<int64_t> slopeSizes_;
  BroadcastShape broadcasting_;
  Tensor contiguousInput_, contiguousGradOutput_;
  Tensor scratch_;  // the slope's factor of each element, then x's negative part
};

}  // namespace nn
