// nn::RowNormalization: checks and buffers here, the work in NormalizationKernels (CPU loops or
// CUDA kernels).
#include "nn/modules/RowNormalization.h"

#include "nn/backend/Backend.h"

namespace nn {

void RowNormalization::makeParameters(bool affine, const std::vector<int64_t>& shape) {
  affine_ = affine;
  if (affine) {
    weight.resize_(shape);
    bias.resize_(shape);
    gradWeight = Tensor::zeros(shape);
    gradBias = Tensor::zeros(shape);
    registerParameter("weight", &weight, &gradWeight);
    registerParameter("bias", &bias, &gradBias);
  }
  reset();
}

void RowNormalization::reset() {
  if (!affine_) return;
  weight.fill_(1.f);
  bias.zero_();
}

void RowNormalization::checkGradOutput(const Tensor& input, const Tensor& gradOutput) const {
  NN_CHECK(gradOutput.sizes() == input.sizes(), toString() << ": expected gradOutput of size " << input.shapeString()
                                                           << ", got " << gradOutput.shapeString());
  checkDevice(gradOutput, input.device(), "gradOutput");
  NN_CHECK(saveMean_.hasSizes({shapeOf(input).rows}) && saveMean_.device() == input.device(),
           toString() << ": backward needs a forward of the input first");
}

NormalizationState RowNormalization::state() {
  return {affine_ ? weight.rawData() : nullptr, affine_ ? bias.rawData() : nullptr, saveMean_.rawData(),
          saveInvstd_.rawData(), epsilon()};
}

const Tensor& RowNormalization::updateOutput(const Tensor& input) {
  checkInput(input);
  const NormalizationShape shape = shapeOf(input);
  const Tensor x = input.contiguous();
  output.resize_(input.sizes(), input.device());
  saveMean_.resize_({shape.rows}, input.device());
  saveInvstd_.resize_({shape.rows}, input.device());
  kernelsOf(input.device()).normalization.updateOutput(input.device(), x.rawData(), output.rawData(), shape, state());
  return output;
}

const Tensor& RowNormalization::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  checkInput(input);
  checkGradOutput(input, gradOutput);
  const Tensor x = input.contiguous();
  const Tensor g = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  kernelsOf(input.device())
      .normalization.updateGradInput(input.device(), x.rawData(), g.rawData(), gradInput.rawData(), shapeOf(input),
                                     state());
  return gradInput;
}

void RowNormalization::accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) {
  if (!affine_) return;
  checkInput(input);
  checkGradOutput(input, gradOutput);
  const Tensor x = input.contiguous();
  const Tensor g = gradOutput.contiguous();
  kernelsOf(input.device())
      .normalization.accGradParameters(input.device(), x.rawData(), g.rawData(), gradWeight.rawData(),
                                       gradBias.rawData(), shapeOf(input), state(), scale);
}

void RowNormalization::clearState() {
  saveMean_.set_(Tensor());
  saveInvstd_.set_(Tensor());
  Module::clearState();
}

}  // namespace nn
