// nn::SpatialConvolution: 2-D convolution (cross-correlation, as Torch7 and PyTorch) of
// [N, C, H, W] or [C, H, W] input with an [nOutputPlane, nInputPlane, kH, kW] weight.
#pragma once

#include "nn/backend/ConvolutionKernels.h"
#include "nn/core/Options.h"

namespace nn {

/// kW x kH kernel, stride dW, dH, zero padding padW, padH on each side, taps dilW, dilH apart
/// (SpatialDilatedConvolution; 1 in files of earlier versions).
struct SpatialConvolutionOptions {
  int64_t nInputPlane = 0, nOutputPlane = 0;
  int64_t kW = 0, kH = 0, dW = 1, dH = 1, padW = 0, padH = 0;
  int64_t dilW = 1, dilH = 1;

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
  }
};

class SpatialConvolution : public WithOptions<SpatialConvolutionOptions> {
 public:
  SpatialConvolution(int64_t nInputPlane, int64_t nOutputPlane, int64_t kW, int64_t kH, int64_t dW = 1, int64_t dH = 1,
                     int64_t padW = 0, int64_t padH = 0)
      : SpatialConvolution(Options{nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH}) {}
  explicit SpatialConvolution(const Options& options) : SpatialConvolution(options, "nn.SpatialConvolution") {}

  /// Weight, then bias, uniform in +-1/sqrt(kW * kH * nInputPlane) from the default
  /// generator (Torch7's reset).
  void reset();

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  /// The input must be the one of the last forward (Torch7's contract for backward).
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;
  void clearState() override;

  std::string typeName() const override { return "nn.SpatialConvolution"; }
  /// "nn.SpatialConvolution(1 -> 20, 5x5)", then ", dW,dH" if strided, padded or dilated, then
  /// ", padW,padH" if padded or dilated, then ", dilW,dilH" if dilated.
  std::string toString() const override;

  /// [nOutputPlane, nInputPlane, kH, kW] and [nOutputPlane].
  Tensor weight, bias, gradWeight, gradBias;

 protected:
  /// `module` names the subclass in the errors of the constructor.
  SpatialConvolution(const Options& options, const char* module);

 private:
  ConvolutionShape checkInput(const Tensor& input) const;
  void checkGradOutput(const Tensor& gradOutput, const Tensor& input, const ConvolutionShape& s) const;

  // Scratch memory of the kernels (nn/backend/ConvolutionKernels.h): on the CPU the unfolded input
  // (im2col) of a chunk of samples per compute thread, on CUDA cuDNN's workspace.
  Tensor workspace_;
};

/// nn::SpatialDilatedConvolution: a SpatialConvolution whose kernel taps lie dilW columns and
/// dilH rows apart (Torch7's SpatialDilatedConvolution, PyTorch's Conv2d(dilation=...)): a
/// kernel of k taps spans dil (k - 1) + 1 cells.
class SpatialDilatedConvolution : public SpatialConvolution {
 public:
  SpatialDilatedConvolution(int64_t nInputPlane, int64_t nOutputPlane, int64_t kW, int64_t kH, int64_t dW = 1,
                            int64_t dH = 1, int64_t padW = 0, int64_t padH = 0, int64_t dilW = 1, int64_t dilH = 1)
      : SpatialDilatedConvolution(Options{nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH, dilW, dilH}) {}
  explicit SpatialDilatedConvolution(const Options& options)
      : SpatialConvolution(options, "nn.SpatialDilatedConvolution") {}

  std::string typeName() const override { return "nn.SpatialDilatedConvolution"; }
};

}  // namespace nn
