// nn::ActivationModule: the passes of the element-wise activations.
#include "nn/modules/ActivationModule.h"

#include "nn/backend/Backend.h"
#include "nn/tensor/Error.h"

namespace nn {

void ActivationModule::setAppliedBefore(bool applied) {
  NN_CHECK(!applied || inplace_, toString()
                                     << ": only a module that works in place can leave its formula to the one before");
  appliedBefore_ = applied;
}

const Tensor& ActivationModule::updateOutput(const Tensor& input) {
  const ActivationKernels& kernels = kernelsOf(input.device()).elementwise.activations[entry_.index];
  if (inplace_) {
    NN_CHECK(input.isContiguous(), toString() << ": works in place, so it expects a contiguous input, got "
                                              << input.shapeString() << " with other strides");
    if (!appliedBefore_) kernels.forward(input.device(), args_, input.rawData(), input.rawData(), input.numel());
    output.set_(input);
    return output;
  }
  const Tensor x = input.contiguous();
  output.resize_(input.sizes(), input.device());
  kernels.forward(input.device(), args_, x.rawData(), output.rawData(), x.numel());
  return output;
}

const Tensor& ActivationModule::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const ActivationKernels& kernels = kernelsOf(input.device()).elementwise.activations[entry_.index];
  if (inplace_) {
    // The input now holds the output, which the formula reads for it (kInPlace).
    checkGradOutput(output, gradOutput);
    NN_CHECK(gradOutput.isContiguous(), toString() << ": works in place, so it expects a contiguous gradOutput");
    if (!appliedBefore_)
      kernels.backward(output.device(), args_, output.rawData(), output.rawData(), gradOutput.rawData(),
                       gradOutput.rawData(), output.numel());
    gradInput.set_(gradOutput);
    return gradInput;
  }
  checkGradOutput(input, gradOutput);
  NN_CHECK(output.sizes() == input.sizes(), toString() << ": backward needs the output of a forward on this input ("
                                                       << input.shapeString() << "), found an output of size "
                                                       << output.shapeString());
  const Tensor x = input.contiguous();
  const Tensor go = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  kernels.backward(input.device(), args_, x.rawData(), output.rawData(), go.rawData(), gradInput.rawData(), x.numel());
  return gradInput;
}

}  // namespace nn
