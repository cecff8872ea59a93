// nn::LogSoftMax: shapes and buffers here, the log-softmax itself in SoftMaxKernels (CPU loops or cuDNN).
#include "nn/modules/LogSoftMax.h"

#include "nn/core/Options.h"
#include "nn/modules/SoftMaxPasses.h"

namespace nn {

NN_REGISTER_MODULE(LogSoftMax);

const Tensor& LogSoftMax::updateOutput(const Tensor& input) {
  softMaxUpdateOutput(*this, true, input, output, columns_);
  return output;
}

const Tensor& LogSoftMax::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  softMaxUpdateGradInput(*this, true, input, gradOutput, output, gradInput, columns_);
  return gradInput;
}

void LogSoftMax::clearState() {
  Module::clearState();
  columns_.set_(Tensor());
}

}  // namespace nn
