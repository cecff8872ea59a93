// nn::PointwiseCriterion: checks here, the loops in CriterionKernels (CPU or CUDA).
#include "nn/criterions/PointwiseCriterion.h"

#include "nn/backend/Backend.h"

namespace nn {

PointwiseCriterion::PointwiseCriterion(Entry entry, bool sizeAverage, Tensor weights)
    : Criterion(sizeAverage), entry_(entry), weights_(std::move(weights)) {}

void PointwiseCriterion::checkInput(const Tensor&) {}

const float* PointwiseCriterion::check(const Tensor& input, const Tensor& target) {
  NN_CHECK(input.numel() > 0, toString() << ": expected a non-empty input, got " << input.shapeString());
  NN_CHECK(target.sizes() == input.sizes(), toString() << ": expected target of size " << input.shapeString()
                                                       << " (the input's), got " << target.shapeString());
  NN_CHECK(target.device() == input.device(),
           toString() << ": expected target on " << input.device().str() << ", got " << target.device().str());
  checkInput(input);
  if (weights_.numel() == 0) return nullptr;
  NN_CHECK(weights_.dim() == 1 && input.dim() >= 1 && weights_.size(0) == input.size(input.dim() - 1),
           toString() << ": expected weights of size [" << input.size(input.dim() - 1)
                      << "] (the input's last dimension), got " << weights_.shapeString() << " for input "
                      << input.shapeString());
  return weightsOn(weights_, input.device());
}

float PointwiseCriterion::updateOutput(const Tensor& input, const Tensor& target) {
  const float* weights = check(input, target);
  const Tensor& x = contiguousIn(input, contiguousInput_);
  const Tensor& t = contiguousIn(target, contiguousTarget_);
  const Device& device = input.device();
  kernelsOf(device).criterion.pointwise[entry_.index]
      .loss(device, x.rawData(), t.rawData(), weights, weights_.numel(), x.numel(), sizeAverage, lossOn(device));
  return readLoss();
}

const Tensor& PointwiseCriterion::updateGradInput(const Tensor& input, const Tensor& target) {
  const float* weights = check(input, target);
  const Tensor& x = contiguousIn(input, contiguousInput_);
  const Tensor& t = contiguousIn(target, contiguousTarget_);
  const Device& device = input.device();
  gradInput.resize_(input.sizes(), device);
  kernelsOf(device).criterion.pointwise[entry_.index]
      .gradient(device, x.rawData(), t.rawData(), weights, weights_.numel(), gradInput.rawData(), x.numel(),
                sizeAverage);
  return gradInput;
}

}  // namespace nn
