// nn::ClassNLLCriterion on the CPU.
#include "nn/ClassNLLCriterion.h"

#include <cmath>

namespace nn {

int64_t ClassNLLCriterion::check(const Tensor& input, const Tensor& target) const {
  NN_CHECK(input.dim() == 1 || input.dim() == 2,
           toString() << ": expected input of size [classes] or [batch, classes], got " << input.shapeString());
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

float ClassNLLCriterion::updateOutput(const Tensor& input, const Tensor& target) {
  const int64_t batch = check(input, target);
  const Tensor x = input.contiguous();
  const Tensor t = target.contiguous();
  const int64_t classes = x.size(x.dim() - 1);
  double total = 0;
  for (int64_t i = 0; i < batch; ++i) total -= x.data()[i * classes + static_cast<int64_t>(t.data()[i])];
  output = static_cast<float>(sizeAverage ? total / batch : total);
  return output;
}

const Tensor& ClassNLLCriterion::updateGradInput(const Tensor& input, const Tensor& target) {
  const int64_t batch = check(input, target);
  const Tensor t = target.contiguous();
  const int64_t classes = input.size(input.dim() - 1);
  gradInput.resize_(input.sizes(), input.device());
  gradInput.zero_();
  const float g = sizeAverage ? -1.f / static_cast<float>(batch) : -1.f;
  for (int64_t i = 0; i < batch; ++i) gradInput.data()[i * classes + static_cast<int64_t>(t.data()[i])] = g;
  return gradInput;
}

}  // namespace nn
