// nn::MulConstant: a copy, then a product in place (Tensor::mul_ on the device's backend); in
// place, the product on the input itself.
#include "nn/modules/MulConstant.h"

#include <cmath>

namespace nn {

NN_REGISTER_MODULE(MulConstant);

std::string MulConstant::toString() const {
  return typeName() + "(constant=" + nn::toString(Config::Value(double{options_.constant})) +
         (options_.inplace ? ", inplace)" : ")");
}

MulConstant::MulConstant(const Options& options) : WithOptions(options) {
  NN_CHECK(std::isfinite(options_.constant), toString() << ": expected a finite constant, got " << options_.constant);
  NN_CHECK(!options_.inplace || options_.constant != 0.f,
           toString() << ": in place needs a nonzero constant (updateGradInput divides the input by it)");
}

const Tensor& MulConstant::updateOutput(const Tensor& input) {
  if (options_.inplace) {
    NN_CHECK(input.isContiguous(), toString() << ": in place needs a contiguous input, got " << input.shapeString()
                                              << " strided");
    Tensor(input).mul_(options_.constant);
    output.set_(input);
    return output;
  }
  output.resizeAs_(input);
  output.copy_(input);
  output.mul_(options_.constant);
  return output;
}

const Tensor& MulConstant::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  checkGradOutput(input, gradOutput);
  if (options_.inplace) {
    NN_CHECK(gradOutput.isContiguous(), toString() << ": in place needs a contiguous gradOutput");
    Tensor(gradOutput).mul_(options_.constant);
    gradInput.set_(gradOutput);
    Tensor(input).mul_(1.f / options_.constant);
    return gradInput;
  }
  gradInput.resizeAs_(gradOutput);
  gradInput.copy_(gradOutput);
  gradInput.mul_(options_.constant);
  return gradInput;
}

}  // namespace nn
