// nn::ClassNLLCriterion: checks here, the loops in CriterionKernels (CPU or CUDA).
#include "nn/criterions/ClassNLLCriterion.h"

#include "nn/backend/Backend.h"

namespace nn {

float ClassNLLCriterion::updateOutput(const Tensor& input, const Tensor& target) {
  const int64_t batch = checkClassTargets(input, target);
  const Tensor x = input.contiguous();
  const Tensor t = target.contiguous();
  const Device& device = input.device();
  kernelsOf(device).criterion.classNllLoss(device, x.rawData(), t.rawData(), batch, x.size(x.dim() - 1), sizeAverage,
                                           lossOn(device));
  return readLoss();
}

const Tensor& ClassNLLCriterion::updateGradInput(const Tensor& input, const Tensor& target) {
  const int64_t batch = checkClassTargets(input, target);
  const Tensor t = target.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  kernelsOf(input.device())
      .criterion.classNllGradient(input.device(), t.rawData(), gradInput.rawData(), batch, input.size(input.dim() - 1),
                                  sizeAverage);
  return gradInput;
}

}  // namespace nn
