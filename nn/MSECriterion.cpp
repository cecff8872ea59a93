// nn::MSECriterion on the CPU.
#include "nn/MSECriterion.h"

#include "nn/math/Mse.h"

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
  const float* xd = x.data();
  const float* td = t.data();
  double total = 0;
  for (int64_t i = 0, n = x.numel(); i < n; ++i) total += math::mseTerm(xd[i], td[i]);
  output = static_cast<float>(sizeAverage ? total / static_cast<double>(x.numel()) : total);
  return output;
}

const Tensor& MSECriterion::updateGradInput(const Tensor& input, const Tensor& target) {
  check(input, target);
  const Tensor x = input.contiguous();
  const Tensor t = target.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  const float* xd = x.data();
  const float* td = t.data();
  float* g = gradInput.data();
  const int64_t n = x.numel();
  const float norm = sizeAverage ? 1.f / static_cast<float>(n) : 1.f;
  for (int64_t i = 0; i < n; ++i) g[i] = math::mseGradient(xd[i], td[i], norm);
  return gradInput;
}

}  // namespace nn
