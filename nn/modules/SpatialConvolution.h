// nn::SpatialConvolution: 2-D convolution (cross-correlation, as Torch7 and PyTorch) of
// [N, C, H, W] or [C, H, W] input with an [nOutputPlane, nInputPlane / groups, kH, kW] weight.
#pragma once

#include "nn/backend/ConvolutionKernels.h"
#include "nn/core/Options.h"

namespace nn {

/// kW x kH kernel, stride dW, dH, zero padding padW, padH on each side, taps dilW, dilH apart
/// (SpatialDilatedConvolution; 1 in files of earlier versions), planes in `groups` groups
/// convolved apart (PyTorch's Conv2d(groups=...); 1 in files of earlier versions).
struct SpatialConvolutionOptions {
  /// Planes of the input, its dimension 1 ([N, C, H, W]) or 0 ([C, H, W]); positive.
  int64_t nInputPlane = 0;
  /// Planes of the output, one filter each; positive.
  int64_t nOutputPlane = 0;
  /// Kernel width in columns; positive.
  int64_t kW = 0;
  /// Kernel height in rows; positive.
  int64_t kH = 0;
  /// Horizontal stride, 1 by default; positive.
  int64_t dW = 1;
  /// Vertical stride, 1 by default; positive.
  int64_t dH = 1;
  /// Zero columns added on the left and on the right, 0 by default.
  int64_t padW = 0;
  /// Zero rows added at the top and at the bottom, 0 by default.
  int64_t padH = 0;
  /// Columns between kernel taps (Torch7's dilationW), 1 (none) by default; positive.
  int64_t dilW = 1;
  /// Rows between kernel taps (Torch7's dilationH), 1 (none) by default; positive.
  int64_t dilH = 1;
  /// Groups of planes (PyTorch's groups), 1 by default; positive, dividing nInputPlane and
  /// nOutputPlane. Output planes [g nOutputPlane / groups, (g + 1) nOutputPlane / groups) see only
  /// input planes [g nInputPlane / groups, (g + 1) nInputPlane / groups); groups = nInputPlane =
  /// nOutputPlane is a depthwise convolution (MobileNet's), a plane for each filter.
  int64_t groups = 1;
  /// A learned bias per output plane (true by default; PyTorch's bias=False where a batch
  /// normalisation follows): without one, `bias` is zeros that no step changes, not a parameter.
  bool bias = true;

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
    field("dilW", dilW, DefaultIfAbsent{});
    field("dilH", dilH, DefaultIfAbsent{});
    field("groups", groups, DefaultIfAbsent{});
    field("bias", bias, DefaultIfAbsent{});
  }
};

/// Torch7's nn.SpatialConvolution (PyTorch's Conv2d): a learned 2-D convolution with a bias per output plane.
class SpatialConvolution : public WithOptions<SpatialConvolutionOptions> {
 public:
  /// As Torch7's nn.SpatialConvolution(nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH), undilated;
  /// weight and bias drawn by reset(). Throws unless the sizes are positive and the padding non-negative.
  SpatialConvolution(int64_t nInputPlane, int64_t nOutputPlane, int64_t kW, int64_t kH, int64_t dW = 1, int64_t dH = 1,
                     int64_t padW = 0, int64_t padH = 0)
      : SpatialConvolution(Options{nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH}) {}
  /// The same from options (what nn::load rebuilds from), dilated where dilW or dilH is above 1,
  /// grouped where groups is: SpatialConvolution(Options{32, 32, 3, 3, 1, 1, 1, 1, 1, 1, 32}) is a
  /// depthwise 3x3 (PyTorch's Conv2d(32, 32, 3, padding=1, groups=32)). Throws unless groups
  /// divides both plane counts.
  explicit SpatialConvolution(const Options& options) : SpatialConvolution(options, "nn.SpatialConvolution") {}

  /// Weight, then bias, uniform in +-1/sqrt(kW * kH * nInputPlane / groups) (the planes a filter
  /// sees) from the default generator (Torch7's reset; PyTorch's bound for groups).
  void reset();

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  /// The input must be the one of the last forward (Torch7's contract for backward).
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;
  void clearState() override;

  std::string typeName() const override { return "nn.SpatialConvolution"; }
  /// "nn.SpatialConvolution(1 -> 20, 5x5)", then ", dW,dH" if strided, padded or dilated, then
  /// ", padW,padH" if padded or dilated, then ", dilW,dilH" if dilated, then ", groups=G" if grouped.
  std::string toString() const override;

  /// The filters, [nOutputPlane, nInputPlane / groups, kH, kW] (Torch7's and PyTorch's layout):
  /// filter o reads the input planes of its group, o / (nOutputPlane / groups).
  Tensor weight;
  /// The bias added to each output plane, [nOutputPlane]; zeros, and no parameter, without one
  /// (SpatialConvolutionOptions::bias).
  Tensor bias;
  /// Gradient of the loss with respect to weight, [nOutputPlane, nInputPlane / groups, kH, kW], summed over the
  /// batch; zeroed by zeroGradParameters.
  Tensor gradWeight;
  /// Gradient of the loss with respect to bias, [nOutputPlane], summed over the batch and positions; zeroed
  /// by zeroGradParameters.
  Tensor gradBias;

 protected:
  /// `module` names the subclass in the errors of the constructor.
  SpatialConvolution(const Options& options, const char* module);

 private:
  ConvolutionShape checkInput(const Tensor& input) const;
  void checkGradOutput(const Tensor& gradOutput, const Tensor& input, const ConvolutionShape& s) const;
  /// Without a bias: `bias` and `gradBias` on `device` (zeros), which the kernels take.
  void placeZeroBias(const Device& device);

  // Scratch memory of the kernels (nn/backend/ConvolutionKernels.h): on the CPU the unfolded input
  // (im2col) of a chunk of samples per compute thread, on CUDA cuDNN's workspace.
  Tensor workspace_;
};

/// nn::SpatialDilatedConvolution: a SpatialConvolution whose kernel taps lie dilW columns and
/// dilH rows apart (Torch7's SpatialDilatedConvolution, PyTorch's Conv2d(dilation=...)): a
/// kernel of k taps spans dil (k - 1) + 1 cells.
class SpatialDilatedConvolution : public SpatialConvolution {
 public:
  /// As Torch7's nn.SpatialDilatedConvolution(nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH,
  /// dilationW, dilationH).
  SpatialDilatedConvolution(int64_t nInputPlane, int64_t nOutputPlane, int64_t kW, int64_t kH, int64_t dW = 1,
                            int64_t dH = 1, int64_t padW = 0, int64_t padH = 0, int64_t dilW = 1, int64_t dilH = 1)
      : SpatialDilatedConvolution(Options{nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH, dilW, dilH}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit SpatialDilatedConvolution(const Options& options)
      : SpatialConvolution(options, "nn.SpatialDilatedConvolution") {}

  std::string typeName() const override { return "nn.SpatialDilatedConvolution"; }
};

}  // namespace nn
