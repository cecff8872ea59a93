// nn::Sum and nn::Mean: the dimension and views here, the sums in BroadcastKernels.
#include "nn/modules/Sum.h"

#include "nn/backend/Backend.h"

namespace nn {

NN_REGISTER_MODULE(Sum);
NN_REGISTER_MODULE(Mean);

Sum::Sum(const Options& options) : WithOptions(options) {}

const Tensor& Sum::updateOutput(const Tensor& input) {
  const ReducedDimension& r = reduced_;
  reduced_.resolve(input, options_.dim, options_.nInputDims, options_.squeeze, *this);
  const Tensor& x = contiguousIn(input, contiguousInput_);
  const Device& device = input.device();
  output.resize_(r.sizes, device);
  const float scale = options_.sizeAverage ? 1.f / static_cast<float>(r.size) : 1.f;
  kernelsOf(device).broadcast.reduce(device, nullptr, x.rawData(), r.base, r.outer * r.inner, r.reduced, r.size,
                                     output.rawData(), scale, false);
  return output;
}

const Tensor& Sum::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const ReducedDimension& r = reduced_;
  reduced_.resolve(input, options_.dim, options_.nInputDims, options_.squeeze, *this);
  checkGradOutput(input, r.sizes, gradOutput);
  const Tensor& g = contiguousIn(gradOutput, contiguousGradOutput_);
  const Device& device = input.device();
  gradInput.resize_(input.sizes(), device);
  gradInput.fill_(options_.sizeAverage ? 1.f / static_cast<float>(r.size) : 1.f);
  kernelsOf(device).broadcast.apply(device, math::BroadcastOp::kMultiply, gradInput.rawData(), g.rawData(), r.spread,
                                    gradInput.rawData(), gradInput.numel());
  return gradInput;
}

void Sum::clearState() {
  Module::clearState();
  contiguousInput_ = Tensor();
  contiguousGradOutput_ = Tensor();
}

}  // namespace nn
