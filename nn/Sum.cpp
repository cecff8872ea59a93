// nn::Sum and nn::Mean: the dimension and views here, the sums in BroadcastKernels.
#include "nn/Sum.h"

#include "nn/backend/Backend.h"

namespace nn {

NN_REGISTER_MODULE(Sum);
NN_REGISTER_MODULE(Mean);

Sum::Sum(const Options& options) : WithOptions(options) {}

int Sum::dimensionOf(const Tensor& input) {
  const int dims = input.dim();
  int d = options_.dim;
  if (d < 0) d += dims;
  else if (options_.nInputDims >= 0 && dims > options_.nInputDims) ++d;
  NN_CHECK(dims >= 1 && input.numel() > 0 && d >= 0 && d < dims,
           toString() << ": expected a non-empty input with dimension " << options_.dim
                      << (options_.nInputDims >= 0 ? " (after a batch dimension where the input has more than " +
                                                         std::to_string(options_.nInputDims) + ")"
                                                   : std::string())
                      << ", got " << input.shapeString());
  outer_ = 1;
  inner_ = 1;
  for (int k = 0; k < d; ++k) outer_ *= input.size(k);
  for (int k = d + 1; k < dims; ++k) inner_ *= input.size(k);
  size_ = input.size(d);
  sizes_.assign(input.sizes().begin(), input.sizes().end());
  if (options_.squeeze && dims > 1)
    sizes_.erase(sizes_.begin() + d);
  else
    sizes_[d] = 1;
  base_ = StridedView();
  base_.push(outer_, size_ * inner_);
  base_.push(inner_, 1);
  reduced_ = StridedView();
  reduced_.push(size_, inner_);
  spread_ = StridedView();
  spread_.push(outer_, inner_);
  spread_.push(size_, 0);
  spread_.push(inner_, 1);
  return d;
}

const Tensor& Sum::updateOutput(const Tensor& input) {
  dimensionOf(input);
  const Tensor& x = contiguousIn(input, contiguousInput_);
  const Device& device = input.device();
  output.resize_(sizes_, device);
  const float scale = options_.sizeAverage ? 1.f / static_cast<float>(size_) : 1.f;
  kernelsOf(device).broadcast.reduce(device, nullptr, x.rawData(), base_, outer_ * inner_, reduced_, size_,
                                     output.rawData(), scale, false);
  return output;
}

const Tensor& Sum::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  dimensionOf(input);
  checkGradOutput(input, sizes_, gradOutput);
  const Tensor& g = contiguousIn(gradOutput, contiguousGradOutput_);
  const Device& device = input.device();
  gradInput.resize_(input.sizes(), device);
  gradInput.fill_(options_.sizeAverage ? 1.f / static_cast<float>(size_) : 1.f);
  kernelsOf(device).broadcast.apply(device, math::BroadcastOp::kMultiply, gradInput.rawData(), g.rawData(), spread_,
                                    gradInput.rawData(), gradInput.numel());
  return gradInput;
}

void Sum::clearState() {
  Module::clearState();
  contiguousInput_ = Tensor();
  contiguousGradOutput_ = Tensor();
}

}  // namespace nn
