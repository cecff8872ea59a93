// nn::LayerNorm: checks and buffers here, the work in NormalizationKernels (CPU loops or CUDA
// kernels), which see the input as one row per sample of the normalised elements, each element
// its own parameter.
#include "nn/modules/LayerNorm.h"

#include <sstream>

#include "nn/backend/Backend.h"
#include "nn/core/Checked.h"

namespace nn {

NN_REGISTER_MODULE(LayerNorm);

LayerNorm::LayerNorm(const Options& options) : WithOptions(options) {
  const auto& [normalizedShape, eps, affine] = options_;
  NN_CHECK(!normalizedShape.empty(), "nn.LayerNorm: expected a normalized shape of at least one size, got none");
  for (int64_t s : normalizedShape)
    NN_CHECK(s > 0 && mulInto(elements_, s, elements_) && elements_ <= kMaxElements,
             "nn.LayerNorm: expected a normalized shape of positive sizes holding at most "
                 << kMaxElements << " elements, got " << shapeString(normalizedShape));
  NN_CHECK(eps >= 0, toString() << ": expected eps >= 0, got " << eps);
  if (affine) {
    weight.resize_(normalizedShape);
    bias.resize_(normalizedShape);
    gradWeight = Tensor::zeros(normalizedShape);
    gradBias = Tensor::zeros(normalizedShape);
    registerParameter("weight", &weight, &gradWeight);
    registerParameter("bias", &bias, &gradBias);
  }
  reset();
}

void LayerNorm::reset() {
  if (!options_.elementwiseAffine) return;
  weight.fill_(1.f);
  bias.zero_();
}

std::string LayerNorm::toString() const {
  std::ostringstream s;
  s << typeName() << "(" << shapeString(options_.normalizedShape);
  if (options_.eps != 1e-5f) s << ", eps=" << options_.eps;
  if (!options_.elementwiseAffine) s << ", elementwiseAffine=false";
  s << ")";
  return s.str();
}

void LayerNorm::checkInput(const Tensor& input) const {
  const std::vector<int64_t>& shape = options_.normalizedShape;
  const int dims = static_cast<int>(shape.size());
  bool fits = input.dim() >= dims;
  for (int k = 0; fits && k < dims; ++k) fits = input.size(input.dim() - dims + k) == shape[k];
  NN_CHECK(fits, toString() << ": expected input of size [..., " << shapeString(shape).substr(1) << ", got "
                            << input.shapeString());
  if (options_.elementwiseAffine) checkDevice(input, weight.device(), "input");
}

void LayerNorm::checkGradOutput(const Tensor& input, const Tensor& gradOutput) const {
  NN_CHECK(gradOutput.sizes() == input.sizes(), toString() << ": expected gradOutput of size " << input.shapeString()
                                                           << ", got " << gradOutput.shapeString());
  checkDevice(gradOutput, input.device(), "gradOutput");
  NN_CHECK(saveMean_.hasSizes({shapeOf(input).rows}) && saveMean_.device() == input.device(),
           toString() << ": backward needs a forward of the input first");
}

NormalizationShape LayerNorm::shapeOf(const Tensor& input) const {
  NormalizationShape shape;
  shape.rows = input.numel() / elements_;
  shape.groupSize = elements_;
  return shape;
}

NormalizationState LayerNorm::state() {
  const bool affine = options_.elementwiseAffine;
  return {affine ? weight.rawData() : nullptr, affine ? bias.rawData() : nullptr, saveMean_.rawData(),
          saveInvstd_.rawData(), options_.eps};
}

const Tensor& LayerNorm::updateOutput(const Tensor& input) {
  checkInput(input);
  const NormalizationShape shape = shapeOf(input);
  const Tensor x = input.contiguous();
  output.resize_(input.sizes(), input.device());
  saveMean_.resize_({shape.rows}, input.device());
  saveInvstd_.resize_({shape.rows}, input.device());
  kernelsOf(input.device()).normalization.updateOutput(input.device(), x.rawData(), output.rawData(), shape, state());
  return output;
}

const Tensor& LayerNorm::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
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

void LayerNorm::accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) {
  if (!options_.elementwiseAffine) return;
  checkInput(input);
  checkGradOutput(input, gradOutput);
  const Tensor x = input.contiguous();
  const Tensor g = gradOutput.contiguous();
  kernelsOf(input.device())
      .normalization.accGradParameters(input.device(), x.rawData(), g.rawData(), gradWeight.rawData(),
                                       gradBias.rawData(), shapeOf(input), state(), scale);
}

void LayerNorm::clearState() {
  saveMean_.set_(Tensor());
  saveInvstd_.set_(Tensor());
  Module::clearState();
}

}  // namespace nn
