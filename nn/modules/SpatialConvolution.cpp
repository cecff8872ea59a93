// nn::SpatialConvolution: shapes and buffers here, the work in ConvolutionKernels (im2col and
// OpenBLAS on the CPU, cuDNN on CUDA).
#include "nn/modules/SpatialConvolution.h"

#include <algorithm>
#include <cmath>

#include "nn/backend/Backend.h"
#include "nn/math/Im2Col.h"
#include "nn/tensor/Checked.h"
#include "nn/tensor/Random.h"

namespace nn {

NN_REGISTER_MODULE(SpatialConvolution);
NN_REGISTER_MODULE(SpatialDilatedConvolution);

SpatialConvolution::SpatialConvolution(const Options& options, const char* module) : WithOptions(options) {
  [[maybe_unused]] const auto [nInputPlane, nOutputPlane, kW, kH, dW, dH, padW, padH, dilW, dilH, groups, hasBias] =
      options;
  NN_CHECK(nInputPlane > 0 && nOutputPlane > 0 && kW > 0 && kH > 0 && dW > 0 && dH > 0 && padW >= 0 && padH >= 0 &&
               dilW > 0 && dilH > 0,
           module << ": expected positive planes, kernel, stride and dilation and non-negative padding, got "
                  << nInputPlane << " -> " << nOutputPlane << ", kernel " << kW << "x" << kH << ", stride " << dW
                  << "," << dH << ", padding " << padW << "," << padH << ", dilation " << dilW << "," << dilH);
  // No plane is larger: beyond, the sizes of a call (checkInput) could overflow.
  NN_CHECK(isExtent(kW) && isExtent(kH) && isExtent(dW) && isExtent(dH) && isExtent(padW) && isExtent(padH) &&
               isExtent(dilW) && isExtent(dilH),
           module << ": expected kernel, stride, padding and dilation of at most " << kMaxElements);
  NN_CHECK(groups > 0 && nInputPlane % groups == 0 && nOutputPlane % groups == 0,
           module << ": expected groups that divide both plane counts, got " << nInputPlane << " -> " << nOutputPlane
                  << " planes in " << groups << " groups");
  weight.resize_({nOutputPlane, nInputPlane / groups, kH, kW});
  gradWeight = Tensor::zeros({nOutputPlane, nInputPlane / groups, kH, kW});
  registerParameter("weight", &weight, &gradWeight);
  bias.resize_({nOutputPlane});
  gradBias = Tensor::zeros({nOutputPlane});
  if (hasBias) registerParameter("bias", &bias, &gradBias);
  reset();
}

void SpatialConvolution::reset() {
  const float stdv =
      1.0f / std::sqrt(static_cast<float>(options_.kW * options_.kH * (options_.nInputPlane / options_.groups)));
  weight.uniform_(defaultGenerator(), -stdv, stdv);
  if (options_.bias)
    bias.uniform_(defaultGenerator(), -stdv, stdv);
  else
    bias.zero_();
}

std::string SpatialConvolution::toString() const {
  std::string s = typeName() + "(" + std::to_string(options_.nInputPlane) + " -> " +
                  std::to_string(options_.nOutputPlane) + ", " + std::to_string(options_.kW) + "x" +
                  std::to_string(options_.kH);
  const bool dilated = options_.dilW != 1 || options_.dilH != 1;
  const bool padded = options_.padW != 0 || options_.padH != 0 || dilated;
  if (options_.dW != 1 || options_.dH != 1 || padded)
    s += ", " + std::to_string(options_.dW) + "," + std::to_string(options_.dH);
  if (padded) s += ", " + std::to_string(options_.padW) + "," + std::to_string(options_.padH);
  if (dilated) s += ", " + std::to_string(options_.dilW) + "," + std::to_string(options_.dilH);
  if (options_.groups != 1) s += ", groups=" + std::to_string(options_.groups);
  if (!options_.bias) s += ", no bias";
  return s + ")";
}

ConvolutionShape SpatialConvolution::checkInput(const Tensor& input) const {
  const int d = input.dim();
  NN_CHECK((d == 3 || d == 4) && input.size(d - 3) == options_.nInputPlane,
           toString() << ": expected input of size [batch, " << options_.nInputPlane << ", height, width] or ["
                      << options_.nInputPlane << ", height, width], got " << input.shapeString());
  const int64_t height = input.size(d - 2), width = input.size(d - 1);
  // Every field is at most kMaxElements (the constructor's check): only the spans are products.
  const auto context = [&] { return toString() + ": the kernel's span"; };
  const int64_t spanH = checkedSum({checkedProduct({options_.dilH, options_.kH - 1}, context), 1}, context);
  const int64_t spanW = checkedSum({checkedProduct({options_.dilW, options_.kW - 1}, context), 1}, context);
  NN_CHECK(height > 0 && width > 0 && height + 2 * options_.padH >= spanH && width + 2 * options_.padW >= spanW,
           toString() << ": expected input height at least " << std::max<int64_t>(spanH - 2 * options_.padH, 1)
                      << " and width at least " << std::max<int64_t>(spanW - 2 * options_.padW, 1)
                      << " (the kernel's span, less the padding), got " << input.shapeString());
  checkDevice(input, weight.device(), "input");
  const ConvolutionShape s{d == 4 ? input.size(0) : 1,
                           options_.nInputPlane,
                           height,
                           width,
                           options_.nOutputPlane,
                           options_.kH,
                           options_.kW,
                           options_.dH,
                           options_.dW,
                           options_.padH,
                           options_.padW,
                           math::convOutputSize(height, options_.kH, options_.dH, options_.padH, options_.dilH),
                           math::convOutputSize(width, options_.kW, options_.dW, options_.padW, options_.dilW),
                           options_.dilH,
                           options_.dilW,
                           options_.groups};
  NN_CHECK(convolutionFits(s), toString() << ": input " << input.shapeString() << " gives an output of " << s.outHeight
                                          << "x" << s.outWidth << " whose unfolded or padded input would exceed "
                                          << kMaxElements << " floats");
  return s;
}

void SpatialConvolution::checkGradOutput(const Tensor& gradOutput, const Tensor& input,
                                         const ConvolutionShape& s) const {
  const bool ok = input.dim() == 4 ? gradOutput.hasSizes({s.batch, options_.nOutputPlane, s.outHeight, s.outWidth})
                                   : gradOutput.hasSizes({options_.nOutputPlane, s.outHeight, s.outWidth});
  NN_CHECK(ok, toString() << ": expected gradOutput of size "
                          << (input.dim() == 4 ? "[" + std::to_string(s.batch) + ", " : "[") << options_.nOutputPlane
                          << ", " << s.outHeight << ", " << s.outWidth << "] for input " << input.shapeString()
                          << ", got " << gradOutput.shapeString());
  checkDevice(gradOutput, weight.device(), "gradOutput");
}

const Tensor& SpatialConvolution::updateOutput(const Tensor& input) {
  const ConvolutionShape s = checkInput(input);
  const Tensor x = input.contiguous();
  if (input.dim() == 4)
    output.resize_({s.batch, options_.nOutputPlane, s.outHeight, s.outWidth}, input.device());
  else
    output.resize_({options_.nOutputPlane, s.outHeight, s.outWidth}, input.device());
  placeZeroBias(input.device());
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
  // Without a bias the kernels' sums of gradOutput land in a scratch that nothing reads.
  placeZeroBias(input.device());
  if (!options_.bias) gradBias.zero_();
  kernelsOf(input.device())
      .convolution.accGradParameters(input.device(), s, x.rawData(), g.rawData(), gradWeight.rawData(),
                                     gradBias.rawData(), scale, workspace_);
}

void SpatialConvolution::placeZeroBias(const Device& device) {
  // Not a parameter, so to() leaves it where it was made: it follows the input's device.
  if (options_.bias || bias.device() == device) return;
  bias = Tensor::zeros({options_.nOutputPlane}, device);
  gradBias = Tensor::zeros({options_.nOutputPlane}, device);
}

void SpatialConvolution::clearState() {
  Module::clearState();
  workspace_.set_(Tensor());
}

}  // namespace nn
