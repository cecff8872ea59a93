// nn::SpatialFullConvolution: the transposed convolution (Torch7's SpatialFullConvolution,
// PyTorch's ConvTranspose2d) of [N, C, H, W] or [C, H, W] input with an [nInputPlane,
// nOutputPlane, kH, kW] weight: the gradient-of-input pass of the SpatialConvolution that maps
// its output back to its input, with a bias per output plane. The output is
// (H - 1) dH - 2 padH + kH + adjH high (likewise wide), adj < stride choosing among the sizes
// that convolution maps back to H. The passes are that convolution's kernels with their roles
// exchanged (nn/backend/ConvolutionKernels.h), the bias BroadcastKernels'.
#pragma once

#include <vector>

#include "nn/backend/ConvolutionKernels.h"
#include "nn/core/Options.h"
#include "nn/modules/BroadcastShape.h"

namespace nn {

struct SpatialFullConvolutionOptions {
  int64_t nInputPlane = 0, nOutputPlane = 0;
  int64_t kW = 0, kH = 0, dW = 1, dH = 1, padW = 0, padH = 0, adjW = 0, adjH = 0;

  template <typename F>
  void visit(F&& field) {
    field("nInputPlane", nInputPlane);
    field("nOutputPlane", nOutputPlane);
    field("kW", kW);
    field("kH", kH);
    field("dW", dW);
    field("dH", dH);
    field("padW", padW);
    field("padH", padH);
    field("adjW", adjW);
    field("adjH", adjH);
  }
};

class SpatialFullConvolution : public WithOptions<SpatialFullConvolutionOptions> {
 public:
  SpatialFullConvolution(int64_t nInputPlane, int64_t nOutputPlane, int64_t kW, int64_t kH, int64_t dW = 1,
                         int64_t dH = 1, int64_t padW = 0, int64_t padH = 0, int64_t adjW = 0, int64_t adjH = 0)
      : SpatialFullConvolution(Options{nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH, adjW, adjH}) {}
  explicit SpatialFullConvolution(const Options& options);

  /// Weight, then bias, uniform in +-1/sqrt(kW * kH * nInputPlane) from the default
  /// generator (Torch7's reset).
  void reset();

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;
  void clearState() override;

  std::string typeName() const override { return "nn.SpatialFullConvolution"; }

  /// [nInputPlane, nOutputPlane, kH, kW] and [nOutputPlane].
  Tensor weight, bias, gradWeight, gradBias;

 private:
  // The convolution whose input is this module's output and whose output is this module's
  // input, for `input`; checks it, naming the module, and sets outputSizes_ and bias_.
  ConvolutionShape shapeOf(const Tensor& input);
  void checkGradOutput(const Tensor& input, const Tensor& gradOutput) const;

  std::vector<int64_t> outputSizes_;
  std::vector<int64_t> biasSizes_;  // [nOutputPlane, 1, 1]: a bias per plane
  BroadcastShape bias_;
  Tensor workspace_;
  Tensor contiguousInput_, contiguousGradOutput_;
};

}  // namespace nn
