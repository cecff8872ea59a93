// nn::LookupTable: the checks here, the rows in LookupKernels.
#include "nn/modules/LookupTable.h"

#include "nn/backend/Backend.h"
#include "nn/math/Lookup.h"
#include "nn/tensor/Random.h"

namespace nn {

NN_REGISTER_MODULE(LookupTable);

LookupTable::LookupTable(const Options& options) : WithOptions(options) {
  NN_CHECK(options.nIndex > 0 && options.nOutput > 0,
           "nn.LookupTable: expected positive sizes, got " << options.nIndex << " x " << options.nOutput);
  weight.resize_({options.nIndex, options.nOutput});
  gradWeight = Tensor::zeros({options.nIndex, options.nOutput});
  registerParameter("weight", &weight, &gradWeight);
  reset();
}

void LookupTable::reset() { weight.normal_(defaultGenerator(), 0.f, 1.f); }

void LookupTable::checkInput(const Tensor& input) {
  NN_CHECK((input.dim() == 1 || input.dim() == 2) && input.numel() > 0,
           toString() << ": expected non-empty indices of size [n] or [batch, n], got " << input.shapeString());
  checkDevice(input, weight.device(), "input");
  const Tensor& index = contiguousIn(input, contiguousInput_);
  backendOf(input.device())
      .checkValues(
          input.device(), index.rawData(), index.numel(), {math::ValueKind::Index, options_.nIndex},
          [this] { return toString(); }, input.sizes());
  outputSizes_.assign(input.sizes().begin(), input.sizes().end());
  outputSizes_.push_back(options_.nOutput);
}

const Tensor& LookupTable::updateOutput(const Tensor& input) {
  checkInput(input);
  const Tensor& index = contiguousIn(input, contiguousInput_);
  const Device& device = input.device();
  output.resize_(outputSizes_, device);
  kernelsOf(device).lookup.gather(device, index.rawData(), weight.rawData(), index.numel(), options_.nOutput,
                                  output.rawData());
  return output;
}

const Tensor& LookupTable::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  checkInput(input);
  checkGradOutput(input, outputSizes_, gradOutput);
  gradInput.resize_(input.sizes(), input.device());
  gradInput.zero_();
  return gradInput;
}

void LookupTable::accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) {
  checkInput(input);
  checkGradOutput(input, outputSizes_, gradOutput);
  const Tensor& index = contiguousIn(input, contiguousInput_);
  const Tensor& g = contiguousIn(gradOutput, contiguousGradOutput_);
  const Device& device = input.device();
  kernelsOf(device).lookup.accumulate(device, index.rawData(), g.rawData(), index.numel(), options_.nOutput, scale,
                                      gradWeight.rawData());
}

void LookupTable::clearState() {
  Module::clearState();
  contiguousInput_ = Tensor();
  contiguousGradOutput_ = Tensor();
}

}  // namespace nn
