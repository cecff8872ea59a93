// nn::SoftMax: shapes and buffers here, the softmax itself in SoftMaxKernels (CPU loops or cuDNN).
#include "nn/modules/SoftMax.h"

#include "nn/core/Options.h"
#include "nn/modules/SoftMaxPasses.h"

namespace nn {

NN_REGISTER_MODULE(SoftMax);

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
