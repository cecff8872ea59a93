// nn::SpatialAveragePooling: shapes and buffers here, the work in PoolingKernels
// (nn/backend/PoolingKernels.h): window means, and their gradient spread back evenly.
#include "nn/modules/SpatialAveragePooling.h"

#include "nn/backend/Backend.h"
#include "nn/core/Options.h"

namespace nn {

NN_REGISTER_MODULE(SpatialAveragePooling);

SpatialAveragePooling::SpatialAveragePooling(int64_t kW, int64_t kH, int64_t dW, int64_t dH, int64_t padW, int64_t padH)
    : SpatialAveragePooling(Options{PoolingWindow{kW, kH, dW, dH, padW, padH}}) {}

SpatialAveragePooling::SpatialAveragePooling(const Options& options) : WithOptions(options) {
  options_.window.check("nn.SpatialAveragePooling");
}

SpatialAveragePooling& SpatialAveragePooling::ceil() {
  options_.window.ceilMode = true;
  return *this;
}

SpatialAveragePooling& SpatialAveragePooling::floor() {
  options_.window.ceilMode = false;
  return *this;
}

SpatialAveragePooling& SpatialAveragePooling::setCountExcludePad() {
  options_.countIncludePad = false;
  return *this;
}

SpatialAveragePooling& SpatialAveragePooling::setCountIncludePad() {
  options_.countIncludePad = true;
  return *this;
}

std::string SpatialAveragePooling::toString() const {
  return "nn.SpatialAveragePooling(" + options_.window.describe() + ")";
}

const Tensor& SpatialAveragePooling::updateOutput(const Tensor& input) {
  const PoolingShape s = options_.window.shapeOf(input, *this);
  const Tensor x = input.contiguous();
  options_.window.resizeLikeOutput(output, input, s);
  kernelsOf(input.device())
      .pooling.averageUpdateOutput(input.device(), s, options_.countIncludePad, x.rawData(), output.rawData());
  return output;
}

const Tensor& SpatialAveragePooling::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const PoolingShape s = options_.window.shapeOf(input, *this);
  options_.window.checkGradOutput(input, gradOutput, s, *this);
  const Tensor g = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  kernelsOf(input.device())
      .pooling.averageUpdateGradInput(input.device(), s, options_.countIncludePad, g.rawData(), gradInput.rawData());
  return gradInput;
}

}  // namespace nn
