// nn::Identity.
#include "nn/Identity.h"

#include "nn/Options.h"

namespace nn {

NN_REGISTER_MODULE(Identity);

const Tensor& Identity::updateOutput(const Tensor& input) {
  output.set_(input);
  return output;
}

const Tensor& Identity::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  NN_CHECK(gradOutput.sizes() == input.sizes(), toString() << ": expected gradOutput of size " << input.shapeString()
                                                           << ", got " << gradOutput.shapeString());
  gradInput.set_(gradOutput);
  return gradInput;
}

}  // namespace nn
