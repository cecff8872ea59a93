// nn::Max: the dimension here, the search and the gradient in BroadcastKernels.
#include "nn/modules/Max.h"

#include "nn/backend/Backend.h"

namespace nn {

NN_REGISTER_MODULE(Max);

const Tensor& Max::updateOutput(const Tensor& input) {
  const ReducedDimension& r = reduced_;
  reduced_.resolve(input, options_.dim, options_.nInputDims, true, *this);
  const Tensor& x = contiguousIn(input, contiguousInput_);
  const Device& device = input.device();
  output.resize_(r.sizes, device);
  indices.resize_(r.sizes, device);
  kernelsOf(device).broadcast.max(device, x.rawData(), r.base, r.outer * r.inner, r.reduced, r.size,
                                  output.rawData(), indices.rawData());
  return output;
}

const Tensor& Max::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const ReducedDimension& r = reduced_;
  reduced_.resolve(input, options_.dim, options_.nInputDims, true, *this);
  checkGradOutput(input, r.sizes, gradOutput);
  NN_CHECK(indices.sizes() == r.sizes && indices.device() == input.device(),
           toString() << ": backward needs a forward on this input (" << input.shapeString() << ") first");
  const Tensor& g = contiguousIn(gradOutput, contiguousGradOutput_);
  const Device& device = input.device();
  gradInput.resize_(input.sizes(), device);
  kernelsOf(device).broadcast.maxGradient(device, g.rawData(), indices.rawData(), r.base, r.outer * r.inner,
                                          r.reduced, gradInput.rawData(), gradInput.numel());
  return gradInput;
}

void Max::clearState() {
  Module::clearState();
  indices = Tensor();
  contiguousInput_ = Tensor();
  contiguousGradOutput_ = Tensor();
}

}  // namespace nn
