// nn::ReLU on the CPU.
#include "nn/ReLU.h"

#include "nn/Elementwise.h"
#include "nn/math/Activation.h"

namespace nn {

NN_REGISTER_MODULE(ReLU);

ModulePtr ReLU::create(const Config&, std::vector<ModulePtr>) { return std::make_shared<ReLU>(); }

const Tensor& ReLU::updateOutput(const Tensor& input) {
  elementwise::forward(input, output, [](float x) { return math::reluForward(x); });
  return output;
}

const Tensor& ReLU::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  elementwise::backward(*this, input, output, gradOutput, gradInput,
                        [](float x, float, float g) { return math::reluBackward(x, g); });
  return gradInput;
}

}  // namespace nn
