// nn::AddConstant: the output filled with the constant, then the input added to it
// (constant + x is x + constant to the bit: a float sum does not depend on the order of its
// two terms).
#include "nn/AddConstant.h"

#include <cmath>

namespace nn {

NN_REGISTER_MODULE(AddConstant);

AddConstant::AddConstant(const Options& options) : WithOptions(options) {
  NN_CHECK(std::isfinite(options_.constant), toString() << ": expected a finite constant, got " << options_.constant);
}

const Tensor& AddConstant::updateOutput(const Tensor& input) {
  const Tensor& x = contiguousIn(input, contiguousInput_);
  output.resizeAs_(x);
  output.fill_(options_.constant);
  output.add_(x);
  return output;
}

const Tensor& AddConstant::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  checkGradOutput(input, gradOutput);
  gradInput.set_(gradOutput);
  return gradInput;
}

void AddConstant::clearState() {
  Module::clearState();
  contiguousInput_.set_(Tensor());
}

}  // namespace nn
