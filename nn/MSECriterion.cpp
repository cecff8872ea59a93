// nn::MSECriterion: checks here, the loops in CriterionKernels (CPU or CUDA).
#include "nn/MSECriterion.h"

#include "nn/backend/Backend.h"

namespace nn {

void MSECriterion::check(const Tensor& input, const Tensor& target) const {
  NN_CHECK(input.numel() > 0, toString() << ": expected a non-empty input, got " << input.shapeString());
  NN_CHECK(target.sizes() == input.sizes(), toString() << ": expected target of size " << input.shapeString()
                                                       << " (the input's), got " << target.shapeString());
  NN_CHECK(target.device() == input.device(),
           toString() << ": expected target on " << input.device().str() << ", got " << target.device().str());
}

float MSECriterion::updateOutput(const Tensor& input, const Tensor& target) {
  check(input, target);
  const Tensor x = input.contiguous();
  const Tensor t = target.contiguous();
  const Device& device = input.device();
  kernelsOf(device).criterion.mseLoss(device, x.rawData(), t.rawData(), x.numel(), sizeAverage, lossOn(device));
  return readLoss();
}

const Tensor& MSECriterion::updateGradInput(const Tensor& input, const Tensor& target) {
  check(input, target);
  const Tensor x = input.contiguous();
  const Tensor t = target.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  kernelsOf(input.device())
      .criterion.mseGradient(input.device(), x.rawData(), t.rawData(), gradInput.rawData(), x.numel(), sizeAverage);
  return gradInput;
}

}  // namespace nn
