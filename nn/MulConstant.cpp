// nn::MulConstant: a copy, then a product in place (Tensor::mul_ on the device's backend).
#include "nn/MulConstant.h"

#include <cmath>

namespace nn {

NN_REGISTER_MODULE(MulConstant);

MulConstant::MulConstant(const Options& options) : WithOptions(options) {
  NN_CHECK(std::isfinite(options_.constant), toString() << ": expected a finite constant, got " << options_.constant);
}

const Tensor& MulConstant::updateOutput(const Tensor& input) {
  output.resizeAs_(input);
  output.copy_(input);
  output.mul_(options_.constant);
  return output;
}

const Tensor& MulConstant::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  checkGradOutput(input, gradOutput);
  gradInput.resizeAs_(gradOutput);
  gradInput.copy_(gradOutput);
  gradInput.mul_(options_.constant);
  return gradInput;
}

}  // namespace nn
