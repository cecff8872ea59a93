// nn::Linear: shapes and buffers here, the products in LinearKernels (OpenBLAS or cuBLAS).
#include "nn/Linear.h"

#include <cmath>

#include "nn/Random.h"
#include "nn/backend/Backend.h"

namespace nn {

NN_REGISTER_MODULE(Linear);

Linear::Linear(int64_t inputSize, int64_t outputSize, bool withBias)
    : inputSize_(inputSize), outputSize_(outputSize), withBias_(withBias) {
  NN_CHECK(inputSize > 0 && outputSize > 0,
           "nn.Linear: expected positive sizes, got " << inputSize << " -> " << outputSize);
  weight.resize_({outputSize, inputSize});
  gradWeight = Tensor::zeros({outputSize, inputSize});
  registerParameter("weight", &weight, &gradWeight);
  if (withBias_) {
    bias.resize_({outputSize});
    gradBias = Tensor::zeros({outputSize});
    registerParameter("bias", &bias, &gradBias);
  }
  reset();
}

ModulePtr Linear::create(const Config& c, std::vector<ModulePtr>) {
  return std::make_shared<Linear>(c.integer("inputSize"), c.integer("outputSize"), c.flag("bias"));
}

Config Linear::config() const {
  return Config().set("inputSize", inputSize_).set("outputSize", outputSize_).set("bias", withBias_);
}

void Linear::reset() {
  const float stdv = 1.0f / std::sqrt(static_cast<float>(inputSize_));
  weight.uniform_(defaultGenerator(), -stdv, stdv);
  if (withBias_) bias.uniform_(defaultGenerator(), -stdv, stdv);
}

std::string Linear::toString() const {
  return "nn.Linear(" + std::to_string(inputSize_) + " -> " + std::to_string(outputSize_) + ")" +
         (withBias_ ? "" : " without bias");
}

void Linear::checkInput(const Tensor& input) const {
  NN_CHECK(input.dim() >= 1 && input.size(input.dim() - 1) == inputSize_,
           toString() << ": expected input of size [" << inputSize_ << "] or [..., " << inputSize_ << "], got "
                      << input.shapeString());
  checkDevice(input, weight.device(), "input");
}

void Linear::checkGradOutput(const Tensor& gradOutput, const Tensor& input) const {
  bool ok = gradOutput.dim() == input.dim() && gradOutput.size(input.dim() - 1) == outputSize_;
  for (int d = 0; ok && d + 1 < input.dim(); ++d) ok = gradOutput.size(d) == input.size(d);
  NN_CHECK(ok, toString() << ": expected gradOutput of the input's size " << input.shapeString()
                          << " with the last dimension " << outputSize_ << ", got " << gradOutput.shapeString());
  checkDevice(gradOutput, weight.device(), "gradOutput");
}

// The products below see every input as a batch x inputSize matrix: all dimensions but the
// last are the batch (a 1-D input is a batch of one).
static int64_t batchOf(const Tensor& input) { return input.numel() / input.size(input.dim() - 1); }

const Tensor& Linear::updateOutput(const Tensor& input) {
  checkInput(input);
  const Tensor x = input.contiguous();
  outputSizes_ = input.sizes();
  outputSizes_.back() = outputSize_;
  output.resize_(outputSizes_, input.device());
  kernelsOf(input.device())
      .linear.updateOutput(input.device(), x.rawData(), weight.rawData(), withBias_ ? bias.rawData() : nullptr,
                           output.rawData(), batchOf(input), inputSize_, outputSize_);
  return output;
}

const Tensor& Linear::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  checkInput(input);
  checkGradOutput(gradOutput, input);
  const Tensor g = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  kernelsOf(input.device())
      .linear.updateGradInput(input.device(), g.rawData(), weight.rawData(), gradInput.rawData(), batchOf(input),
                              inputSize_, outputSize_);
  return gradInput;
}

void Linear::accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) {
  checkInput(input);
  checkGradOutput(gradOutput, input);
  const Tensor x = input.contiguous();
  const Tensor g = gradOutput.contiguous();
  kernelsOf(input.device())
      .linear.accGradParameters(input.device(), x.rawData(), g.rawData(), gradWeight.rawData(),
                                withBias_ ? gradBias.rawData() : nullptr, batchOf(input), inputSize_, outputSize_,
                                scale);
}

}  // namespace nn
