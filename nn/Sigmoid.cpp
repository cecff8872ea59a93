// nn::Sigmoid: the formula is in nn/math/Activation.h, the loops in ElementwiseKernels.
#include "nn/Sigmoid.h"

#include "nn/Elementwise.h"

namespace nn {

NN_REGISTER_MODULE(Sigmoid);

ModulePtr Sigmoid::create(const Config&, std::vector<ModulePtr>) { return std::make_shared<Sigmoid>(); }

const Tensor& Sigmoid::updateOutput(const Tensor& input) {
  elementwise::forward(&ElementwiseKernels::sigmoid, {}, input, output);
  return output;
}

const Tensor& Sigmoid::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  elementwise::backward(*this, &ElementwiseKernels::sigmoid, {}, input, output, gradOutput, gradInput);
  return gradInput;
}

}  // namespace nn
