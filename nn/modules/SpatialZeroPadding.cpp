// nn::SpatialZeroPadding: the output zeroed, then the input's part copied into its place
// through views the module keeps; backward the other way.
#include "nn/modules/SpatialZeroPadding.h"

#include <algorithm>

#include "nn/tensor/Checked.h"

namespace nn {

NN_REGISTER_MODULE(SpatialZeroPadding);

SpatialZeroPadding::SpatialZeroPadding(const Options& options) : WithOptions(options) {
  // No plane is wider: beyond, the sizes below could overflow.
  const auto& o = options_;
  NN_CHECK(isSignedExtent(o.padLeft) && isSignedExtent(o.padRight) && isSignedExtent(o.padTop) &&
               isSignedExtent(o.padBottom),
           toString() << ": expected counts from " << -kMaxElements << " to " << kMaxElements);
}

std::string SpatialZeroPadding::toString() const {
  return "nn.SpatialZeroPadding(l=" + std::to_string(options_.padLeft) + ", r=" + std::to_string(options_.padRight) +
         ", t=" + std::to_string(options_.padTop) + ", b=" + std::to_string(options_.padBottom) + ")";
}

void SpatialZeroPadding::plan(const Tensor& input) {
  NN_CHECK(input.dim() == 3 || input.dim() == 4,
           toString() << ": expected an input [C, H, W] or [N, C, H, W], got " << input.shapeString());
  const int64_t height = input.size(input.dim() - 2), width = input.size(input.dim() - 1);
  // Sizes and counts are at most kMaxElements: these sums cannot overflow.
  const int64_t outHeight = height + options_.padTop + options_.padBottom;
  const int64_t outWidth = width + options_.padLeft + options_.padRight;
  outputSizes_ = input.sizes();
  outputSizes_[outputSizes_.size() - 2] = outHeight;
  outputSizes_[outputSizes_.size() - 1] = outWidth;
  int64_t extent = 0;
  NN_CHECK(outHeight >= 1 && outWidth >= 1 && extentOf(outputSizes_.data(), outputSizes_.size(), extent),
           toString() << ": expected an output of at least 1 x 1 and at most " << kMaxElements << " elements, got "
                      << outHeight << " x " << outWidth << " for input " << input.shapeString());
  // Rows and columns cropped from the input (negative counts) and added to the output.
  const int64_t cropTop = std::max<int64_t>(0, -options_.padTop), cropLeft = std::max<int64_t>(0, -options_.padLeft);
  const int64_t rows = height - cropTop - std::max<int64_t>(0, -options_.padBottom);
  const int64_t columns = width - cropLeft - std::max<int64_t>(0, -options_.padRight);
  empty_ = rows <= 0 || columns <= 0;
  partSizes_ = input.sizes();
  partSizes_[partSizes_.size() - 2] = std::max<int64_t>(rows, 0);
  partSizes_[partSizes_.size() - 1] = std::max<int64_t>(columns, 0);
  if (empty_) return;
  // The part's first cell lies in the input and in the output: within their extents.
  inputStart_ = cropTop * width + cropLeft;
  outputStart_ = std::max<int64_t>(0, options_.padTop) * outWidth + std::max<int64_t>(0, options_.padLeft);
}

void SpatialZeroPadding::pointParts(const Tensor& inputSized, const Tensor& outputSized) {
  inputPart_.set_(inputSized.storage(), inputSized.storageOffset() + inputStart_, partSizes_, inputSized.strides());
  outputPart_.set_(outputSized.storage(), outputSized.storageOffset() + outputStart_, partSizes_,
                   outputSized.strides());
}

const Tensor& SpatialZeroPadding::updateOutput(const Tensor& input) {
  plan(input);
  output.resize_(outputSizes_, input.device());
  output.zero_();
  if (empty_) return output;
  pointParts(contiguousIn(input, contiguousInput_), output);
  outputPart_.copy_(inputPart_);
  return output;
}

const Tensor& SpatialZeroPadding::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  plan(input);
  checkGradOutput(input, outputSizes_, gradOutput);
  gradInput.resize_(input.sizes(), input.device());
  gradInput.zero_();
  if (empty_) return gradInput;
  pointParts(gradInput, contiguousIn(gradOutput, contiguousGradOutput_));
  inputPart_.copy_(outputPart_);
  return gradInput;
}

void SpatialZeroPadding::clearState() {
  Module::clearState();
  for (Tensor* t : {&contiguousInput_, &contiguousGradOutput_, &inputPart_, &outputPart_}) t->set_(Tensor());
}

}  // namespace nn
