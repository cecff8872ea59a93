// nn::CrossEntropyCriterion: checks here, one log-sum-exp per row in CriterionKernels (CPU or
// CUDA), no log-probability buffer.
#include "nn/criterions/CrossEntropyCriterion.h"

#include "nn/backend/Backend.h"

namespace nn {

float CrossEntropyCriterion::updateOutput(const Tensor& input, const Tensor& target) {
  const int64_t batch = checkClassTargets(input, target);
  const Tensor x = input.contiguous();
  const Tensor t = target.contiguous();
  const Device& device = input.device();
  kernelsOf(device).criterion.crossEntropyLoss(device, x.rawData(), t.rawData(), batch, x.size(x.dim() - 1),
                                               sizeAverage, lossOn(device));
  return readLoss();
}

const Tensor& CrossEntropyCriterion::updateGradInput(const Tensor& input, const Tensor& target) {
  const int64_t batch = checkClassTargets(input, target);
  const Tensor x = input.contiguous();
  const Tensor t = target.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  kernelsOf(input.device())
      .criterion.crossEntropyGradient(input.device(), x.rawData(), t.rawData(), gradInput.rawData(), batch,
                                      x.size(x.dim() - 1), sizeAverage);
  return gradInput;
}

}  // namespace nn
