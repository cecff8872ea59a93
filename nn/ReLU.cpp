// nn::ReLU on the CPU.
#include "nn/ReLU.h"

#include "nn/Elementwise.h"
#include "nn/math/Activation.h"

namespace nn {

NN_REGISTER_MODULE(ReLU);

ModulePtr ReLU::create(const Config& config, std::vector<ModulePtr>) {
  return std::make_shared<ReLU>(config.has("inplace") && config.flag("inplace"));
}

// Out of place it has no settings, so its files read as before in-place existed.
Config ReLU::config() const { return inplace_ ? Config().set("inplace", 1) : Config(); }

std::string ReLU::toString() const { return inplace_ ? "nn.ReLU(true)" : "nn.ReLU"; }

const Tensor& ReLU::updateOutput(const Tensor& input) {
  if (!inplace_) {
    elementwise::forward(input, output, [](float x) { return math::reluForward(x); });
    return output;
  }
  elementwise::forwardInPlace(*this, input, [](float x) { return math::reluForward(x); });
  output.set_(input);
  return output;
}

const Tensor& ReLU::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  if (!inplace_) {
    elementwise::backward(*this, input, output, gradOutput, gradInput,
                          [](float x, float, float g) { return math::reluBackward(x, g); });
    return gradInput;
  }
  // The input now holds the output; y > 0 exactly where x > 0, so the formula reads y.
  elementwise::backwardInPlace(*this, output, gradOutput,
                               [](float y, float g) { return math::reluBackward(y, g); });
  gradInput.set_(gradOutput);
  return gradInput;
}

}  // namespace nn
