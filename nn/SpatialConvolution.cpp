// nn::SpatialConvolution: shapes and buffers here, the work in ConvolutionKernels (im2col and
// OpenBLAS on the CPU, cuDNN on CUDA).
#include "nn/SpatialConvolution.h"

#include <algorithm>
#include <cmath>

#include "nn/Random.h"
#include "nn/backend/Backend.h"
#include "nn/math/Im2Col.h"

namespace nn {

NN_REGISTER_MODULE(SpatialConvolution);

SpatialConvolution::SpatialConvolution(int64_t nInputPlane, int64_t nOutputPlane, int64_t kW, int64_t kH, int64_t dW,
                                       int64_t dH, int64_t padW, int64_t padH)
    : nInputPlane_(nInputPlane),
      nOutputPlane_(nOutputPlane),
      kW_(kW),
      kH_(kH),
      dW_(dW),
      dH_(dH),
      padW_(padW),
      padH_(padH) {
  NN_CHECK(nInputPlane > 0 && nOutputPlane > 0 && kW > 0 && kH > 0 && dW > 0 && dH > 0 && padW >= 0 && padH >= 0,
           "nn.SpatialConvolution: expected positive planes, kernel and stride and non-negative padding, got "
               << nInputPlane << " -> " << nOutputPlane << ", kernel " << kW << "x" << kH << ", stride " << dW << ","
               << dH << ", padding " << padW << "," << padH);
  weight.resize_({nOutputPlane, nInputPlane, kH, kW});
  gradWeight = Tensor::zeros({nOutputPlane, nInputPlane, kH, kW});
  registerParameter("weight", &weight, &gradWeight);
  bias.resize_({nOutputPlane});
  gradBias = Tensor::zeros({nOutputPlane});
  registerParameter("bias", &bias, &gradBias);
  reset();
}

ModulePtr SpatialConvolution::create(const Config& c, std::vector<ModulePtr>) {
  return std::make_shared<SpatialConvolution>(c.integer("nInputPlane"), c.integer("nOutputPlane"), c.integer("kW"),
                                              c.integer("kH"), c.integer("dW"), c.integer("dH"), c.integer("padW"),
                                              c.integer("padH"));
}

Config SpatialConvolution::config() const {
  return Config()
      .set("nInputPlane", nInputPlane_)
      .set("nOutputPlane", nOutputPlane_)
      .set("kW", kW_)
      .set("kH", kH_)
      .set("dW", dW_)
      .set("dH", dH_)
      .set("padW", padW_)
      .set("padH", padH_);
}

void SpatialConvolution::reset() {
  const float stdv = 1.0f / std::sqrt(static_cast<float>(kW_ * kH_ * nInputPlane_));
  weight.uniform_(defaultGenerator(), -stdv, stdv);
  bias.uniform_(defaultGenerator(), -stdv, stdv);
}

std::string SpatialConvolution::toString() const {
  std::string s = "nn.SpatialConvolution(" + std::to_string(nInputPlane_) + " -> " + std::to_string(nOutputPlane_) +
                  ", " + std::to_string(kW_) + "x" + std::to_string(kH_);
  const bool padded = padW_ != 0 || padH_ != 0;
  if (dW_ != 1 || dH_ != 1 || padded) s += ", " + std::to_string(dW_) + "," + std::to_string(dH_);
  if (padded) s += ", " + std::to_string(padW_) + "," + std::to_string(padH_);
  return s + ")";
}

ConvolutionShape SpatialConvolution::checkInput(const Tensor& input) const {
  const int d = input.dim();
  NN_CHECK((d == 3 || d == 4) && input.size(d - 3) == nInputPlane_,
           toString() << ": expected input of size [batch, " << nInputPlane_ << ", height, width] or [" << nInputPlane_
                      << ", height, width], got " << input.shapeString());
  const int64_t height = input.size(d - 2), width = input.size(d - 1);
  NN_CHECK(height > 0 && width > 0 && height + 2 * padH_ >= kH_ && width + 2 * padW_ >= kW_,
           toString() << ": expected input height at least " << std::max<int64_t>(kH_ - 2 * padH_, 1)
                      << " and width at least " << std::max<int64_t>(kW_ - 2 * padW_, 1)
                      << " (the kernel, less the padding), got " << input.shapeString());
  checkDevice(input, weight.device(), "input");
  return ConvolutionShape{d == 4 ? input.size(0) : 1,
                          nInputPlane_,
                          height,
                          width,
                          nOutputPlane_,
                          kH_,
                          kW_,
                          dH_,
                          dW_,
                          padH_,
                          padW_,
                          math::convOutputSize(height, kH_, dH_, padH_),
                          math::convOutputSize(width, kW_, dW_, padW_)};
}

void SpatialConvolution::checkGradOutput(const Tensor& gradOutput, const Tensor& input,
                                         const ConvolutionShape& s) const {
  const bool ok = input.dim() == 4 ? gradOutput.hasSizes({s.batch, nOutputPlane_, s.outHeight, s.outWidth})
                                   : gradOutput.hasSizes({nOutputPlane_, s.outHeight, s.outWidth});
  NN_CHECK(ok, toString() << ": expected gradOutput of size "
                          << (input.dim() == 4 ? "[" + std::to_string(s.batch) + ", " : "[") << nOutputPlane_ << ", "
                          << s.outHeight << ", " << s.outWidth << "] for input " << input.shapeString() << ", got "
                          << gradOutput.shapeString());
  checkDevice(gradOutput, weight.device(), "gradOutput");
}

const Tensor& SpatialConvolution::updateOutput(const Tensor& input) {
  const ConvolutionShape s = checkInput(input);
  const Tensor x = input.contiguous();
  if (input.dim() == 4)
    output.resize_({s.batch, nOutputPlane_, s.outHeight, s.outWidth}, input.device());
  else
    output.resize_({nOutputPlane_, s.outHeight, s.outWidth}, input.device());
  kernelsOf(input.device())
      .convolution.updateOutput(input.device(), s, x.rawData(), weight.rawData(), bias.rawData(), output.rawData(),
                                workspace_);
  return output;
}

const Tensor& SpatialConvolution::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const ConvolutionShape s = checkInput(input);
  checkGradOutput(gradOutput, input, s);
  const Tensor g = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  kernelsOf(input.device())
      .convolution.updateGradInput(input.device(), s, g.rawData(), weight.rawData(), gradInput.rawData(), workspace_);
  return gradInput;
}

void SpatialConvolution::accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) {
  const ConvolutionShape s = checkInput(input);
  checkGradOutput(gradOutput, input, s);
  NN_CHECK(output.sizes() == gradOutput.sizes(),
           toString() << ": backward needs a forward on this input (" << input.shapeString() << ") first");
  const Tensor x = input.contiguous();
  const Tensor g = gradOutput.contiguous();
  kernelsOf(input.device())
      .convolution.accGradParameters(input.device(), s, x.rawData(), g.rawData(), gradWeight.rawData(),
                                     gradBias.rawData(), scale, workspace_);
}

void SpatialConvolution::clearState() {
  Module::clearState();
  workspace_.set_(Tensor());
}

}  // namespace nn
