// nn::ClassNLLCriterion on the CPU.
#include "nn/ClassNLLCriterion.h"

#include <cmath>

namespace nn {


float ClassNLLCriterion::updateOutput(const Tensor& input, const Tensor& target) {
  const int64_t batch = checkClassTargets(input, target);
  const Tensor x = input.contiguous();
  const Tensor t = target.contiguous();
  const int64_t classes = x.size(x.dim() - 1);
  double total = 0;
  for (int64_t i = 0; i < batch; ++i) total -= x.data()[i * classes + static_cast<int64_t>(t.data()[i])];
  output = static_cast<float>(sizeAverage ? total / batch : total);
  return output;
}

const Tensor& ClassNLLCriterion::updateGradInput(const Tensor& input, const Tensor& target) {
  const int64_t batch = checkClassTargets(input, target);
  const Tensor t = target.contiguous();
  const int64_t classes = input.size(input.dim() - 1);
  gradInput.resize_(input.sizes(), input.device());
  gradInput.zero_();
  const float g = sizeAverage ? -1.f / static_cast<float>(batch) : -1.f;
  for (int64_t i = 0; i < batch; ++i) gradInput.data()[i * classes + static_cast<int64_t>(t.data()[i])] = g;
  return gradInput;
}

}  // namespace nn
