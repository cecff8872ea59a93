// nn::BroadcastParameterModule: the checks and views here, the loops in BroadcastKernels.
#include "nn/modules/BroadcastParameterModule.h"

#include <cmath>

#include "nn/backend/Backend.h"
#include "nn/tensor/Random.h"

namespace nn {

BroadcastParameterModule::BroadcastParameterModule(math::BroadcastOp op, const std::vector<int64_t>& sizes, const char* name)
    : op_(op) {
  parameter_.resize_(sizes);
  gradParameter_ = Tensor::zeros(sizes);
  registerParameter(name, &parameter_, &gradParameter_);
  reset();
}

void BroadcastParameterModule::reset() {
  const float stdv = 1.0f / std::sqrt(static_cast<float>(parameter_.numel()));
  parameter_.uniform_(defaultGenerator(), -stdv, stdv);
}

const BroadcastShape& BroadcastParameterModule::broadcastingFor(const Tensor& input) {
  checkDevice(input, parameter_.device(), "input");
  NN_CHECK(input.numel() > 0 && broadcastingOf(input.sizes(), parameter_.sizes(), broadcasting_),
           toString() << ": expected a non-empty input whose last dimensions are the parameter's "
                      << parameter_.shapeString() << " or 1 where the parameter's are 1 (or that holds "
                      << parameter_.numel() << " elements per sample), got " << input.shapeString());
  return broadcasting_;
}

const Tensor& BroadcastParameterModule::updateOutput(const Tensor& input) {
  const BroadcastShape& b = broadcastingFor(input);
  const Tensor& x = contiguousIn(input, contiguousInput_);
  const Device& device = input.device();
  output.resize_(input.sizes(), device);
  kernelsOf(device).broadcast.apply(device, op_, x.rawData(), parameter_.rawData(), b.parameter, output.rawData(),
                                    x.numel());
  return output;
}

const Tensor& BroadcastParameterModule::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const BroadcastShape& b = broadcastingFor(input);
  checkGradOutput(input, gradOutput);
  const Device& device = input.device();
  gradInput.resize_(input.sizes(), device);
  if (op_ == math::BroadcastOp::kAdd) {
    gradInput.copy_(gradOutput);
    return gradInput;
  }
  const Tensor& g = contiguousIn(gradOutput, contiguousGradOutput_);
  kernelsOf(device).broadcast.apply(device, op_, g.rawData(), parameter_.rawData(), b.parameter,
                                    gradInput.rawData(), g.numel());
  return gradInput;
}

void BroadcastParameterModule::accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) {
  const BroadcastShape& b = broadcastingFor(input);
  checkGradOutput(input, gradOutput);
  const Tensor& x = contiguousIn(input, contiguousInput_);
  const Tensor& g = contiguousIn(gradOutput, contiguousGradOutput_);
  const Device& device = input.device();
  kernelsOf(device).broadcast.reduce(device, op_ == math::BroadcastOp::kMultiply ? x.rawData() : nullptr,
                                     g.rawData(), b.base, parameter_.numel(), b.reduced, b.reducedCount,
                                     gradParameter_.rawData(), scale, true);
}

void BroadcastParameterModule::clearState() {
  Module::clearState();
  contiguousInput_ = Tensor();
  contiguousGradOutput_ = Tensor();
}

}  // namespace nn
