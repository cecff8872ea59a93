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

/// The constructor arguments of nn::PReLU.
struct PReLUOptions {
  /// The number of planes, each with its own slope (the size of the input's dimension 1, or of a
  /// vector's dimension 0); 0 (the default) for one slope shared by every element.
  int64_t nOutputPlane = 0;

  template <typename F>
  void visit(F&& field) {
    field("nOutputPlane", nOutputPlane);
  }
};

/// Parametric ReLU with learned slopes (Torch7's nn.PReLU, PyTorch's PReLU).
class PReLU : public WithOptions<PReLUOptions> {
 public:
  /// `nOutputPlane` slopes (one shared where 0), each 0.25; throws where it is negative.
  explicit PReLU(int64_t nOutputPlane = 0) : PReLU(Options{nOutputPlane}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit PReLU(const Options& options);

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;
  void clearState() override;

  std::string typeName() const override { return "nn.PReLU"; }

  /// The slopes a, [nOutputPlane], or [1] where nOutputPlane is 0; 0.25 to begin with.
  Tensor weight;
  /// Gradient of the loss with respect to weight, same shape, summed over the elements each slope
  /// applies to (the batch and the plane's positions); zeroed by zeroGradParameters.
  Tensor gradWeight;

 private:
  // The slopes' broadcasting against `input`, checked, naming the module.
  const BroadcastShape& broadcastingFor(const Tensor& input);

  std::vector<int64_t> slopeSizes_;
  BroadcastShape broadcasting_;
  Tensor contiguousInput_, contiguousGradOutput_;
  Tensor scratch_;  // the slope's factor of each element, then x's negative part
};

}  // namespace nn
