// nn::SpatialConvolution: 2-D convolution (cross-correlation, as Torch7 and PyTorch) of
// [N, C, H, W] or [C, H, W] input with an [nOutputPlane, nInputPlane, kH, kW] weight.
#pragma once

#include "nn/Module.h"

namespace nn {

class SpatialConvolution : public Module {
 public:
  /// kW x kH kernel, stride dW, dH, zero padding padW, padH on each side.
  SpatialConvolution(int64_t nInputPlane, int64_t nOutputPlane, int64_t kW, int64_t kH, int64_t dW = 1, int64_t dH = 1,
                     int64_t padW = 0, int64_t padH = 0);
  static ModulePtr create(const Config& config, std::vector<ModulePtr> children);

  /// Weight, then bias, uniform in +-1/sqrt(kW * kH * nInputPlane) from the default
  /// generator (Torch7's reset).
  void reset();

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  /// The input must be the one of the last forward (Torch7's contract for backward).
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;
  void clearState() override;

  std::string typeName() const override { return "nn.SpatialConvolution"; }
  /// "nn.SpatialConvolution(1 -> 20, 5x5)", then ", dW,dH" if strided or padded, then
  /// ", padW,padH" if padded.
  std::string toString() const override;
  Config config() const override;

  /// [nOutputPlane, nInputPlane, kH, kW] and [nOutputPlane].
  Tensor weight, bias, gradWeight, gradBias;

 private:
  // Sizes of one call: the module's, and those derived from the input.
  struct Shape {
    int64_t batch, planes, height, width;
    int64_t kH, kW, dH, dW, padH, padW;
    int64_t outHeight, outWidth;
    int64_t chunk;  // samples unfolded at a time
    int64_t rows() const { return planes * kH * kW; }
    int64_t positions() const { return outHeight * outWidth; }
  };
  Shape checkInput(const Tensor& input) const;
  void checkGradOutput(const Tensor& gradOutput, const Tensor& input, const Shape& s) const;
  // `count` samples of input [count, planes, height, width] -> columns [rows, count * outH * outW],
  // and back (col2im adds into gradInput, which the caller zeroes).
  static void im2col(const Shape& s, const float* input, int64_t count, float* columns);
  static void col2im(const Shape& s, const float* columns, int64_t count, float* gradInput);

  int64_t nInputPlane_, nOutputPlane_;
  int64_t kW_, kH_, dW_, dH_, padW_, padH_;

  // The batch is unfolded a chunk of samples at a time into columns_ [nInputPlane * kH * kW,
  // chunk * outH * outW], each sample's columns side by side, a chunk small enough to stay in
  // the cache while the GEMMs read it (a whole batch would stream through memory, which scales
  // badly when several devices share the machine). Each sample is then one GEMM with the
  // weight, written straight into output's [batch, nOutputPlane, outH, outW]. Backward reuses
  // columns_ for the unfolded input gradient, and accGradParameters unfolds the input again.
  Tensor columns_;
};

}  // namespace nn
