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

/// The constructor arguments of nn::SpatialFullConvolution, named as Torch7's.
struct SpatialFullConvolutionOptions {
  /// Planes of the input, its dimension 1 ([N, C, H, W]) or 0 ([C, H, W]); positive.
  int64_t nInputPlane = 0;
  /// Planes of the output; positive.
  int64_t nOutputPlane = 0;
  /// Kernel width in columns; positive.
  int64_t kW = 0;
  /// Kernel height in rows; positive.
  int64_t kH = 0;
  /// Horizontal stride: output columns per input column, 1 by default; positive.
  int64_t dW = 1;
  /// Vertical stride: output rows per input row, 1 by default; positive.
  int64_t dH = 1;
  /// Columns taken off each side of the output (the padding of the convolution it undoes), 0 by default.
  int64_t padW = 0;
  /// Rows taken off the top and the bottom of the output, 0 by default.
  int64_t padH = 0;
  /// Extra columns added on the right of the output, from 0 (the default) to dW - 1.
  int64_t adjW = 0;
  /// Extra rows added at the bottom of the output, from 0 (the default) to dH - 1.
  int64_t adjH = 0;

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

/// Torch7's nn.SpatialFullConvolution (PyTorch's ConvTranspose2d): a learned transposed convolution.
class SpatialFullConvolution : public WithOptions<SpatialFullConvolutionOptions> {
 public:
  /// As Torch7's nn.SpatialFullConvolution(nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH, adjW, adjH);
  /// weight and bias drawn by reset(). Throws unless the sizes are positive, the padding non-negative
  /// and adjW, adjH below the strides.
  SpatialFullConvolution(int64_t nInputPlane, int64_t nOutputPlane, int64_t kW, int64_t kH, int64_t dW = 1,
                         int64_t dH = 1, int64_t padW = 0, int64_t padH = 0, int64_t adjW = 0, int64_t adjH = 0)
      : SpatialFullConvolution(Options{nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH, adjW, adjH}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit SpatialFullConvolution(const Options& options);

  /// Weight, then bias, uniform in +-1/sqrt(kW * kH * nInputPlane) from the default
  /// generator (Torch7's reset).
  void reset();

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;
  void clearState() override;

  std::string typeName() const override { return "nn.SpatialFullConvolution"; }

  /// The filters, [nInputPlane, nOutputPlane, kH, kW] (Torch7's and PyTorch's layout: input planes first).
  Tensor weight;
  /// The bias added to each output plane, [nOutputPlane].
  Tensor bias;
  /// Gradient of the loss with respect to weight, [nInputPlane, nOutputPlane, kH, kW], summed over the batch;
  /// zeroed by zeroGradParameters.
  Tensor gradWeight;
  /// Gradient of the loss with respect to bias, [nOutputPlane], summed over the batch and positions; zeroed
  /// by zeroGradParameters.
  Tensor gradBias;

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
