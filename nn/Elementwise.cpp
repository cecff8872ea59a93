// The module side of element-wise activations.
#include "nn/Elementwise.h"

#include "nn/Error.h"
#include "nn/backend/Backend.h"

namespace nn::elementwise {

namespace {

void checkGradOutput(const Module& module, const Tensor& like, const Tensor& gradOutput) {
  NN_CHECK(gradOutput.sizes() == like.sizes(), module.toString()
                                                   << ": expected gradOutput of size " << like.shapeString() << ", got "
                                                   << gradOutput.shapeString());
  NN_CHECK(gradOutput.device() == like.device(), module.toString() << ": expected gradOutput on " << like.device().str()
                                                                   << ", got " << gradOutput.device().str());
}

}  // namespace

void forward(Entry entry, const math::ActivationArgs& args, const Tensor& input, Tensor& output) {
  const Tensor x = input.contiguous();
  output.resize_(input.sizes(), input.device());
  (kernelsOf(input.device()).elementwise.*entry)
      .forward(input.device(), args, x.rawData(), output.rawData(), x.numel());
}

void forwardInPlace(const Module& module, Entry entry, const math::ActivationArgs& args, const Tensor& input) {
  NN_CHECK(input.isContiguous(), module.toString() << ": works in place, so it expects a contiguous input, got "
                                                   << input.shapeString() << " with other strides");
  (kernelsOf(input.device()).elementwise.*entry)
      .forward(input.device(), args, input.rawData(), input.rawData(), input.numel());
}

void backward(const Module& module, Entry entry, const math::ActivationArgs& args, const Tensor& input,
              const Tensor& output, const Tensor& gradOutput, Tensor& gradInput) {
  checkGradOutput(module, input, gradOutput);
  NN_CHECK(output.sizes() == input.sizes(), module.toString() << ": backward needs the output of a forward on "
                                                              << "this input (" << input.shapeString()
                                                              << "), found an output of size " << output.shapeString());
  const Tensor x = input.contiguous();
  const Tensor go = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  (kernelsOf(input.device()).elementwise.*entry)
      .backward(input.device(), args, x.rawData(), output.rawData(), go.rawData(), gradInput.rawData(), x.numel());
}

void backwardInPlace(const Module& module, Entry entry, const math::ActivationArgs& args, const Tensor& output,
                     const Tensor& gradOutput) {
  checkGradOutput(module, output, gradOutput);
  NN_CHECK(gradOutput.isContiguous(), module.toString() << ": works in place, so it expects a contiguous gradOutput");
  (kernelsOf(output.device()).elementwise.*entry)
      .backward(output.device(), args, output.rawData(), output.rawData(), gradOutput.rawData(), gradOutput.rawData(),
                output.numel());
}

}  // namespace nn::elementwise
