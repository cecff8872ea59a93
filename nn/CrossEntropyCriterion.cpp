// nn::CrossEntropyCriterion on the CPU: one log-sum-exp per row, no log-probability buffer.
#include "nn/CrossEntropyCriterion.h"

#include <cmath>

#include "nn/math/CrossEntropy.h"

namespace nn {

int64_t CrossEntropyCriterion::check(const Tensor& input, const Tensor& target) const {
  NN_CHECK(
      (input.dim() == 1 || input.dim() == 2) && input.numel() > 0,
      toString() << ": expected non-empty input of size [classes] or [batch, classes], got " << input.shapeString());
  const int64_t batch = input.dim() == 1 ? 1 : input.size(0);
  NN_CHECK(target.numel() == batch && target.dim() <= 1, toString() << ": expected target of size [" << batch
                                                                    << "] for input " << input.shapeString() << ", got "
                                                                    << target.shapeString());
  NN_CHECK(target.device() == input.device(),
           toString() << ": expected target on " << input.device().str() << ", got " << target.device().str());
  const int64_t classes = input.size(input.dim() - 1);
  const Tensor contiguousTarget = target.contiguous();
  const float* t = contiguousTarget.data();
  for (int64_t i = 0; i < batch; ++i) {
    const float c = t[i];
    NN_CHECK(c >= 0 && c < classes && std::floor(c) == c, toString()
                                                              << ": target " << c << " at position " << i
                                                              << " is not a class index in [0, " << classes << ")");
  }
  return batch;
}

float CrossEntropyCriterion::updateOutput(const Tensor& input, const Tensor& target) {
  const int64_t batch = check(input, target);
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
  const int64_t batch = check(input, target);
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
