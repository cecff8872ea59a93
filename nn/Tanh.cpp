// nn::Tanh: the formula is in nn/math/Activation.h, the loops in ElementwiseKernels.
#include "nn/Tanh.h"

#include "nn/Elementwise.h"

namespace nn {

NN_REGISTER_MODULE(Tanh);

ModulePtr Tanh::create(const Config&, std::vector<ModulePtr>) { return std::make_shared<Tanh>(); }

const Tensor& Tanh::updateOutput(const Tensor& input) {
  elementwise::forward(&ElementwiseKernels::tanh, {}, input, output);
  return output;
}

const Tensor& Tanh::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  elementwise::backward(*this, &ElementwiseKernels::tanh, {}, input, output, gradOutput, gradInput);
  return gradInput;
}

}  // namespace nn
