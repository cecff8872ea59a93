// nn::Sigmoid on the CPU.
#include "nn/Sigmoid.h"

#include "nn/Elementwise.h"
#include "nn/math/Activation.h"

namespace nn {

NN_REGISTER_MODULE(Sigmoid);

ModulePtr Sigmoid::create(const Config&, std::vector<ModulePtr>) { return std::make_shared<Sigmoid>(); }

const Tensor& Sigmoid::updateOutput(const Tensor& input) {
  elementwise::forward(input, output, [](float x) { return math::sigmoidForward(x); });
  return output;
}

const Tensor& Sigmoid::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  elementwise::backward(*this, input, output, gradOutput, gradInput,
                        [](float, float y, float g) { return math::sigmoidBackward(y, g); });
  return gradInput;
}

}  // namespace nn
