// nn::Tanh on the CPU.
#include "nn/Tanh.h"

#include "nn/Elementwise.h"
#include "nn/math/Activation.h"

namespace nn {

NN_REGISTER_MODULE(Tanh);

ModulePtr Tanh::create(const Config&, std::vector<ModulePtr>) { return std::make_shared<Tanh>(); }

const Tensor& Tanh::updateOutput(const Tensor& input) {
  elementwise::forward(input, output, [](float x) { return math::tanhForward(x); });
  return output;
}

const Tensor& Tanh::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  elementwise::backward(*this, input, output, gradOutput, gradInput,
                        [](float, float y, float g) { return math::tanhBackward(y, g); });
  return gradInput;
}

}  // namespace nn
