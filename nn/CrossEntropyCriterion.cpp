// nn::CrossEntropyCriterion on the CPU: one log-sum-exp per row, no log-probability buffer.
#include "nn/CrossEntropyCriterion.h"

#include <cmath>

#include "nn/math/CrossEntropy.h"

namespace nn {


float CrossEntropyCriterion::updateOutput(const Tensor& input, const Tensor& target) {
  const int64_t batch = checkClassTargets(input, target);
  const Tensor x = input.contiguous();
  const Tensor t = target.contiguous();
  const int64_t classes = x.size(x.dim() - 1);
  double total = 0;
  for (int64_t i = 0; i < batch; ++i) {
    const float* row = x.data() + i * classes;
    total += math::crossEntropyLoss(math::logSumExp(row, classes), row[static_cast<int64_t>(t.data()[i])]);
  }
  output = static_cast<float>(sizeAverage ? total / static_cast<double>(batch) : total);
  return output;
}

const Tensor& CrossEntropyCriterion::updateGradInput(const Tensor& input, const Tensor& target) {
  const int64_t batch = checkClassTargets(input, target);
  const Tensor x = input.contiguous();
  const Tensor t = target.contiguous();
  const int64_t classes = x.size(x.dim() - 1);
  gradInput.resize_(input.sizes(), input.device());
  const float norm = sizeAverage ? 1.f / static_cast<float>(batch) : 1.f;
  for (int64_t i = 0; i < batch; ++i) {
    const float* row = x.data() + i * classes;
    float* g = gradInput.data() + i * classes;
    const math::LogSumExp lse = math::logSumExp(row, classes);
    const int64_t label = static_cast<int64_t>(t.data()[i]);
    for (int64_t j = 0; j < classes; ++j) g[j] = math::crossEntropyGradient(row[j], lse, j == label, norm);
  }
  return gradInput;
}

}  // namespace nn
