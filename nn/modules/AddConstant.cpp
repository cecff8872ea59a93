// nn::AddConstant: the output filled with the constant, then the input added to it
// (constant + x is x + constant to the bit: a float sum does not depend on the order of its
// two terms).
#include "nn/modules/AddConstant.h"

#include <cmath>

namespace nn {

NN_REGISTER_MODULE(AddConstant);

std::string AddConstant::toString() const {
  return typeName() + "(constant=" + nn::toString(Config::Value(double{options_.constant})) +
         (options_.inplace ? ", inplace)" : ")");
}

AddConstant::AddConstant(const Options& options) : WithOptions(options) {
  NN_CHECK(std::isfinite(options_.constant), toString() << ": expected a finite constant, got " << options_.constant);
}

const Tensor& AddConstant::updateOutput(const Tensor& input) {
  if (options_.inplace) {
    NN_CHECK(input.isContiguous(), toString() << ": in place needs a contiguous input, got " << input.shapeString()
                                              << " strided");
    constants_.resizeAs_(input).fill_(options_.constant);
    Tensor(input).add_(constants_);
    output.set_(input);
    return output;
  }
  const Tensor& x = contiguousIn(input, contiguousInput_);
  output.resizeAs_(x);
  output.fill_(options_.constant);
  output.add_(x);
  return output;
}

const Tensor& AddConstant::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  checkGradOutput(input, gradOutput);
  gradInput.set_(gradOutput);
  if (options_.inplace) {
    constants_.resizeAs_(input).fill_(options_.constant);
    Tensor(input).add_(constants_, -1.f);
  }
  return gradInput;
}

void AddConstant::clearState() {
  Module::clearState();
  contiguousInput_.set_(Tensor());
  constants_.set_(Tensor());
}

}  // namespace nn
