// nn::SoftMax: shapes and buffers here, the softmax itself in SoftMaxKernels (CPU loops or cuDNN).
#include "nn/SoftMax.h"

#include "nn/SoftMaxPasses.h"

namespace nn {

NN_REGISTER_MODULE(SoftMax);

ModulePtr SoftMax::create(const Config&, std::vector<ModulePtr>) { return std::make_shared<SoftMax>(); }

const Tensor& SoftMax::updateOutput(const Tensor& input) {
  softMaxUpdateOutput(*this, false, input, output, columns_);
  return output;
}

const Tensor& SoftMax::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  softMaxUpdateGradInput(*this, false, input, gradOutput, output, gradInput, columns_);
  return gradInput;
}

void SoftMax::clearState() {
  Module::clearState();
  columns_.set_(Tensor());
}

}  // namespace nn
