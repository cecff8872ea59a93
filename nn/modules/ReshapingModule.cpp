// nn::ReshapingModule: output and gradInput as views of the input and gradOutput.
#include "nn/modules/ReshapingModule.h"

namespace nn {

const Tensor& ReshapingModule::updateOutput(const Tensor& input) {
  const std::vector<int64_t>& sizes = outputSizes(input);
  const Tensor& source = contiguousIn(input, contiguousInput_);
  output.set_(source.storage(), source.storageOffset(), sizes);
  return output;
}

const Tensor& ReshapingModule::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const std::vector<int64_t>& sizes = outputSizes(input);
  NN_CHECK(gradOutput.sizes() == sizes, toString()
                                            << ": expected gradOutput of size " << shapeString(sizes) << " for input "
                                            << input.shapeString() << ", got " << gradOutput.shapeString());
  const Tensor& source = contiguousIn(gradOutput, contiguousGradOutput_);
  gradInput.set_(source.storage(), source.storageOffset(), input.sizes());
  return gradInput;
}

void ReshapingModule::clearState() {
  Module::clearState();
  contiguousInput_.set_(Tensor());
  contiguousGradOutput_.set_(Tensor());
}

}  // namespace nn
