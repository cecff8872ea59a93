// nn::PReLU: the slopes' line-up here, the loops in BroadcastKernels.
#include "nn/modules/PReLU.h"

#include "nn/backend/Backend.h"

namespace nn {

NN_REGISTER_MODULE(PReLU);

PReLU::PReLU(const Options& options) : WithOptions(options) {
  NN_CHECK(options.nOutputPlane >= 0,
           "nn.PReLU: expected nOutputPlane >= 0 (0: one shared slope), got " << options.nOutputPlane);
  const int64_t n = options.nOutputPlane > 0 ? options.nOutputPlane : 1;
  weight = Tensor::full({n}, 0.25f);
  gradWeight = Tensor::zeros({n});
  registerParameter("weight", &weight, &gradWeight);
}

const BroadcastShape& PReLU::broadcastingFor(const Tensor& input) {
  checkDevice(input, weight.device(), "input");
  const int64_t planes = options_.nOutputPlane;
  const int dims = input.dim();
  const int planeDim = dims >= 2 ? 1 : 0;
  NN_CHECK(input.numel() > 0 && (planes == 0 || (dims >= 1 && input.size(planeDim) == planes)),
           toString() << ": expected a non-empty input with " << planes << " planes (dimension 1 of [N, " << planes
                      << ", ...], or [" << planes << "]), got " << input.shapeString());
  // [planes, 1, ...] over the dimensions from the planes' on, or [1] shared.
  slopeSizes_.assign(planes == 0 ? 1 : static_cast<size_t>(dims - planeDim), 1);
  if (planes > 0) slopeSizes_[0] = planes;
  broadcastingOf(input.sizes(), slopeSizes_, broadcasting_);
  return broadcasting_;
}

const Tensor& PReLU::updateOutput(const Tensor& input) {
  const BroadcastShape& b = broadcastingFor(input);
  const Tensor& x = contiguousIn(input, contiguousInput_);
  const Device& device = input.device();
  output.resize_(input.sizes(), device);
  kernelsOf(device).broadcast.apply(device, math::BroadcastOp::kPReLU, x.rawData(), weight.rawData(), b.parameter,
                                    output.rawData(), x.numel());
  return output;
}

const Tensor& PReLU::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const BroadcastShape& b = broadcastingFor(input);
  checkGradOutput(input, gradOutput);
  const Tensor& x = contiguousIn(input, contiguousInput_);
  const Device& device = input.device();
  // gradInput = gradOutput times the slope's factor of each element (1 above 0).
  gradInput.resize_(input.sizes(), device);
  kernelsOf(device).broadcast.apply(device, math::BroadcastOp::kPReLUSlope, x.rawData(), weight.rawData(),
                                    b.parameter, gradInput.rawData(), x.numel());
  gradInput.cmul_(contiguousIn(gradOutput, contiguousGradOutput_));
  return gradInput;
}

void PReLU::accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) {
  const BroadcastShape& b = broadcastingFor(input);
  checkGradOutput(input, gradOutput);
  const Tensor& x = contiguousIn(input, contiguousInput_);
  const Tensor& g = contiguousIn(gradOutput, contiguousGradOutput_);
  const Device& device = input.device();
  // dy/da = x where x <= 0: gradWeight += scale * the sums of that part of x times gradOutput.
  scratch_.resize_(input.sizes(), device);
  const Kernels& kernels = kernelsOf(device);
  kernels.broadcast.apply(device, math::BroadcastOp::kNegativePart, x.rawData(), weight.rawData(), b.parameter,
                          scratch_.rawData(), x.numel());
  kernels.broadcast.reduce(device, scratch_.rawData(), g.rawData(), b.base, weight.numel(), b.reduced, b.reducedCount,
                           gradWeight.rawData(), scale, true);
}

void PReLU::clearState() {
  Module::clearState();
  contiguousInput_ = Tensor();
  contiguousGradOutput_ = Tensor();
  scratch_ = Tensor();
}

}  // namespace nn
