// nn::ReLU: the formula is in nn/math/Activation.h, the loops in ElementwiseKernels.
#include "nn/ReLU.h"

#include "nn/Elementwise.h"

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
    elementwise::forward(&ElementwiseKernels::relu, {}, input, output);
    return output;
  }
  elementwise::forwardInPlace(*this, &ElementwiseKernels::relu, {}, input);
  output.set_(input);
  return output;
}

const Tensor& ReLU::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  if (!inplace_) {
    elementwise::backward(*this, &ElementwiseKernels::relu, {}, input, output, gradOutput, gradInput);
    return gradInput;
  }
  // The input now holds the output; y > 0 exactly where x > 0, so the formula reads y.
  elementwise::backwardInPlace(*this, &ElementwiseKernels::relu, {}, output, gradOutput);
  gradInput.set_(gradOutput);
  return gradInput;
}

}  // namespace nn
