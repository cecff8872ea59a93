// nn::SpatialFullConvolution: shapes here; the passes are a SpatialConvolution's kernels with
// the roles of input and output exchanged, and BroadcastKernels for the bias.
#include "nn/modules/SpatialFullConvolution.h"

#include <cmath>

#include "nn/backend/Backend.h"
#include "nn/tensor/Checked.h"
#include "nn/tensor/Random.h"

namespace nn {

NN_REGISTER_MODULE(SpatialFullConvolution);

SpatialFullConvolution::SpatialFullConvolution(const Options& options) : WithOptions(options) {
  const auto [nIn, nOut, kW, kH, dW, dH, padW, padH, adjW, adjH] = options;
  NN_CHECK(nIn > 0 && nOut > 0 && kW > 0 && kH > 0 && dW > 0 && dH > 0 && padW >= 0 && padH >= 0,
           "nn.SpatialFullConvolution: expected positive planes, kernel and stride and non-negative padding, got "
               << nIn << " -> " << nOut << ", kernel " << kW << "x" << kH << ", stride " << dW << "," << dH
               << ", padding " << padW << "," << padH);
  NN_CHECK(adjW >= 0 && adjH >= 0 && adjW < dW && adjH < dH,
           "nn.SpatialFullConvolution: expected adjW, adjH from 0 to below the stride " << dW << "," << dH << ", got "
                                                                                       << adjW << "," << adjH);
  // No plane is larger: beyond, the sizes of a call (shapeOf) could overflow.
  NN_CHECK(isExtent(kW) && isExtent(kH) && isExtent(dW) && isExtent(dH) && isExtent(padW) && isExtent(padH),
           "nn.SpatialFullConvolution: expected kernel, stride and padding of at most " << kMaxElements);
  weight.resize_({nIn, nOut, kH, kW});
  gradWeight = Tensor::zeros({nIn, nOut, kH, kW});
  registerParameter("weight", &weight, &gradWeight);
  bias.resize_({nOut});
  gradBias = Tensor::zeros({nOut});
  registerParameter("bias", &bias, &gradBias);
  biasSizes_ = {nOut, 1, 1};
  reset();
}

void SpatialFullConvolution::reset() {
  const float stdv = 1.0f / std::sqrt(static_cast<float>(options_.kW * options_.kH * options_.nInputPlane));
  weight.uniform_(defaultGenerator(), -stdv, stdv);
  bias.uniform_(defaultGenerator(), -stdv, stdv);
}

ConvolutionShape SpatialFullConvolution::shapeOf(const Tensor& input) {
  const int d = input.dim();
  const Options& o = options_;
  NN_CHECK((d == 3 || d == 4) && input.size(d - 3) == o.nInputPlane && input.size(d - 2) > 0 && input.size(d - 1) > 0,
           toString() << ": expected non-empty input of size [batch, " << o.nInputPlane << ", height, width] or ["
                      << o.nInputPlane << ", height, width], got " << input.shapeString());
  checkDevice(input, weight.device(), "input");
  const int64_t height = input.size(d - 2), width = input.size(d - 1);
  // Every field is at most kMaxElements (the constructor's check): only the strides multiply.
  const auto context = [&] { return toString() + ": the output's size for input " + input.shapeString(); };
  const int64_t outHeight =
      checkedSum({checkedProduct({height - 1, o.dH}, context), -2 * o.padH, o.kH, o.adjH}, context);
  const int64_t outWidth = checkedSum({checkedProduct({width - 1, o.dW}, context), -2 * o.padW, o.kW, o.adjW}, context);
  NN_CHECK(outHeight > 0 && outWidth > 0, toString() << ": input " << input.shapeString() << " gives an output of "
                                                     << outHeight << "x" << outWidth
                                                     << " cells (the padding takes more than the kernel gives)");
  outputSizes_.assign(input.sizes().begin(), input.sizes().end());
  outputSizes_[d - 3] = o.nOutputPlane;
  outputSizes_[d - 2] = outHeight;
  outputSizes_[d - 1] = outWidth;
  // The kernels run a convolution of the output's size back to the input's (the roles exchanged).
  const ConvolutionShape s{d == 4 ? input.size(0) : 1,
                           o.nOutputPlane,
                           outHeight,
                           outWidth,
                           o.nInputPlane,
                           o.kH,
                           o.kW,
                           o.dH,
                           o.dW,
                           o.padH,
                           o.padW,
                           height,
                           width};
  NN_CHECK(convolutionFits(s), toString() << ": input " << input.shapeString() << " gives an output of " << outHeight
                                          << "x" << outWidth << " whose unfolded or padded planes would exceed "
                                          << kMaxElements << " floats");
  broadcastingOf(outputSizes_, biasSizes_, bias_);
  return s;
}

void SpatialFullConvolution::checkGradOutput(const Tensor& input, const Tensor& gradOutput) const {
  Module::checkGradOutput(input, outputSizes_, gradOutput);
}

const Tensor& SpatialFullConvolution::updateOutput(const Tensor& input) {
  const ConvolutionShape s = shapeOf(input);
  const Tensor& x = contiguousIn(input, contiguousInput_);
  const Device& device = input.device();
  output.resize_(outputSizes_, device);
  const Kernels& kernels = kernelsOf(device);
  kernels.convolution.updateGradInput(device, s, x.rawData(), weight.rawData(), output.rawData(), workspace_);
  kernels.broadcast.apply(device, math::BroadcastOp::kAdd, output.rawData(), bias.rawData(), bias_.parameter,
                          output.rawData(), output.numel());
  return output;
}

const Tensor& SpatialFullConvolution::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const ConvolutionShape s = shapeOf(input);
  checkGradOutput(input, gradOutput);
  const Tensor& g = contiguousIn(gradOutput, contiguousGradOutput_);
  const Device& device = input.device();
  gradInput.resize_(input.sizes(), device);
  kernelsOf(device).convolution.updateOutput(device, s, g.rawData(), weight.rawData(), nullptr, gradInput.rawData(),
                                             workspace_);
  return gradInput;
}

void SpatialFullConvolution::accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) {
  const ConvolutionShape s = shapeOf(input);
  checkGradOutput(input, gradOutput);
  const Tensor& x = contiguousIn(input, contiguousInput_);
  const Tensor& g = contiguousIn(gradOutput, contiguousGradOutput_);
  const Device& device = input.device();
  const Kernels& kernels = kernelsOf(device);
  kernels.convolution.accGradParameters(device, s, g.rawData(), x.rawData(), gradWeight.rawData(), nullptr, scale,
                                        workspace_);
  kernels.broadcast.reduce(device, nullptr, g.rawData(), bias_.base, options_.nOutputPlane, bias_.reduced,
                           bias_.reducedCount, gradBias.rawData(), scale, true);
}

void SpatialFullConvolution::clearState() {
  Module::clearState();
  workspace_.set_(Tensor());
  contiguousInput_ = Tensor();
  contiguousGradOutput_ = Tensor();
}

}  // namespace nn
