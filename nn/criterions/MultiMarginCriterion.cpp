// nn::MultiMarginCriterion: checks here, the loops in CriterionKernels (CPU or CUDA).
#include "nn/criterions/MultiMarginCriterion.h"

#include <cmath>
#include <sstream>

#include "nn/backend/Backend.h"

namespace nn {

MultiMarginCriterion::MultiMarginCriterion(int p, Tensor weights, float margin, bool sizeAverage)
    : Criterion(sizeAverage), p_(p), margin_(margin), weights_(std::move(weights)) {
  NN_CHECK(p == 1 || p == 2, "nn.MultiMarginCriterion: expected p 1 or 2, got " << p);
  NN_CHECK(std::isfinite(margin), "nn.MultiMarginCriterion: expected a finite margin, got " << margin);
  checkWeights(weights_, "nn.MultiMarginCriterion");
}

std::string MultiMarginCriterion::toString() const {
  std::ostringstream s;
  s << "nn.MultiMarginCriterion(p=" << p_ << ", margin=" << margin_ << ")";
  return s.str();
}

const float* MultiMarginCriterion::check(const Tensor& input, const Tensor& target) {
  checkClassTargets(input, target);
  const int64_t classes = input.size(input.dim() - 1);
  if (weights_.numel() == 0) return nullptr;
  NN_CHECK(weights_.size(0) == classes, toString() << ": expected " << classes << " weights (one per class), got "
                                                   << weights_.shapeString());
  return weightsOn(weights_, input.device());
}

float MultiMarginCriterion::updateOutput(const Tensor& input, const Tensor& target) {
  const float* weights = check(input, target);
  const Tensor& x = contiguousIn(input, contiguousInput_);
  const Tensor& t = contiguousIn(target, contiguousTarget_);
  const Device& device = input.device();
  const int64_t classes = input.size(input.dim() - 1);
  kernelsOf(device).criterion.multiMarginLoss(device, x.rawData(), t.rawData(), weights, x.numel() / classes,
                                              classes, p_, margin_, sizeAverage, lossOn(device));
  return readLoss();
}

const Tensor& MultiMarginCriterion::updateGradInput(const Tensor& input, const Tensor& target) {
  const float* weights = check(input, target);
  const Tensor& x = contiguousIn(input, contiguousInput_);
  const Tensor& t = contiguousIn(target, contiguousTarget_);
  const Device& device = input.device();
  const int64_t classes = input.size(input.dim() - 1);
  gradInput.resize_(input.sizes(), device);
  kernelsOf(device).criterion.multiMarginGradient(device, x.rawData(), t.rawData(), weights, gradInput.rawData(),
                                                  x.numel() / classes, classes, p_, margin_, sizeAverage);
  return gradInput;
}

}  // namespace nn
