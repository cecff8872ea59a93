// nn::Linear: shapes and buffers here, the products in LinearKernels (the CPU's or cuBLAS).
#include "nn/modules/Linear.h"

#include <cmath>

#include "nn/backend/Backend.h"
#include "nn/tensor/Random.h"

namespace nn {

NN_REGISTER_MODULE(Linear);

Linear::Linear(const Options& options) : WithOptions(options) {
  const int64_t inputSize = options.inputSize, outputSize = options.outputSize;
  NN_CHECK(inputSize > 0 && outputSize > 0,
           "nn.Linear: expected positive sizes, got " << inputSize << " -> " << outputSize);
  weight.resize_({outputSize, inputSize});
  gradWeight = Tensor::zeros({outputSize, inputSize});
  registerParameter("weight", &weight, &gradWeight);
  if (options.bias) {
    bias.resize_({outputSize});
    gradBias = Tensor::zeros({outputSize});
    registerParameter("bias", &bias, &gradBias);
  }
  reset();
}

void Linear::reset() {
  const float stdv = 1.0f / std::sqrt(static_cast<float>(options_.inputSize));
  weight.uniform_(defaultGenerator(), -stdv, stdv);
  if (options_.bias) bias.uniform_(defaultGenerator(), -stdv, stdv);
}

std::string Linear::toString() const {
  return "nn.Linear(" + std::to_string(options_.inputSize) + " -> " + std::to_string(options_.outputSize) + ")" +
         (options_.bias ? "" : " without bias");
}

void Linear::checkInput(const Tensor& input) const {
  NN_CHECK(input.dim() >= 1 && input.size(input.dim() - 1) == options_.inputSize,
           toString() << ": expected input of size [" << options_.inputSize << "] or [..., " << options_.inputSize
                      << "], got " << input.shapeString());
  checkDevice(input, weight.device(), "input");
}

void Linear::checkGradOutput(const Tensor& gradOutput, const Tensor& input) const {
  bool ok = gradOutput.dim() == input.dim() && gradOutput.size(input.dim() - 1) == options_.outputSize;
  for (int d = 0; ok && d + 1 < input.dim(); ++d) ok = gradOutput.size(d) == input.size(d);
  NN_CHECK(ok, toString() << ": expected gradOutput of the input's size " << input.shapeString()
                          << " with the last dimension " << options_.outputSize << ", got "
                          << gradOutput.shapeString());
  checkDevice(gradOutput, weight.device(), "gradOutput");
}

// The products below see every input as a batch x inputSize matrix: all dimensions but the
// last are the batch (a 1-D input is a batch of one).
static int64_t batchOf(const Tensor& input) { return input.numel() / input.size(input.dim() - 1); }

const Tensor& Linear::updateOutput(const Tensor& input) {
  checkInput(input);
  const Tensor x = input.contiguous();
  outputSizes_ = input.sizes();
  outputSizes_.back() = options_.outputSize;
  output.resize_(outputSizes_, input.device());
  kernelsOf(input.device())
      .linear.updateOutput(input.device(), x.rawData(), weight.rawData(), options_.bias ? bias.rawData() : nullptr,
                           output.rawData(), batchOf(input), options_.inputSize, options_.outputSize, workspace_);
  return output;
}

const Tensor& Linear::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  checkInput(input);
  checkGradOutput(gradOutput, input);
  const Tensor g = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  kernelsOf(input.device())
      .linear.updateGradInput(input.device(), g.rawData(), weight.rawData(), gradInput.rawData(), batchOf(input),
                              options_.inputSize, options_.outputSize, workspace_);
  return gradInput;
}

void Linear::accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) {
  checkInput(input);
  checkGradOutput(gradOutput, input);
  const Tensor x = input.contiguous();
  const Tensor g = gradOutput.contiguous();
  kernelsOf(input.device())
      .linear.accGradParameters(input.device(), x.rawData(), g.rawData(), gradWeight.rawData(),
                                options_.bias ? gradBias.rawData() : nullptr, batchOf(input), options_.inputSize,
                                options_.outputSize, scale);
}

void Linear::clearState() {
  Module::clearState();
  workspace_.set_(Tensor());
}

}  // namespace nn
