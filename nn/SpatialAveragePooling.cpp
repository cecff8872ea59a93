// nn::SpatialAveragePooling: shapes and buffers here, the work in PoolingKernels
// (nn/backend/PoolingKernels.h): window means, and their gradient spread back evenly.
#include "nn/SpatialAveragePooling.h"

#include "nn/backend/Backend.h"

namespace nn {

NN_REGISTER_MODULE(SpatialAveragePooling);

SpatialAveragePooling::SpatialAveragePooling(int64_t kW, int64_t kH, int64_t dW, int64_t dH, int64_t padW, int64_t padH)
    : window_("nn.SpatialAveragePooling", kW, kH, dW, dH, padW, padH) {}

SpatialAveragePooling::SpatialAveragePooling(const PoolingWindow& window) : window_(window) {}

ModulePtr SpatialAveragePooling::create(const Config& c, std::vector<ModulePtr>) {
  auto m = std::make_shared<SpatialAveragePooling>(PoolingWindow("nn.SpatialAveragePooling", c));
  if (!c.flag("countIncludePad")) m->setCountExcludePad();
  return m;
}

Config SpatialAveragePooling::config() const {
  Config c;
  return window_.addTo(c).set("countIncludePad", countIncludePad_);
}

SpatialAveragePooling& SpatialAveragePooling::ceil() {
  window_.ceilMode = true;
  return *this;
}

SpatialAveragePooling& SpatialAveragePooling::floor() {
  window_.ceilMode = false;
  return *this;
}

SpatialAveragePooling& SpatialAveragePooling::setCountExcludePad() {
  countIncludePad_ = false;
  return *this;
}

SpatialAveragePooling& SpatialAveragePooling::setCountIncludePad() {
  countIncludePad_ = true;
  return *this;
}

std::string SpatialAveragePooling::toString() const { return "nn.SpatialAveragePooling(" + window_.describe() + ")"; }

const Tensor& SpatialAveragePooling::updateOutput(const Tensor& input) {
  const PoolingShape s = window_.shapeOf(input, *this);
  const Tensor x = input.contiguous();
  window_.resizeLikeOutput(output, input, s);
  kernelsOf(input.device())
      .pooling.averageUpdateOutput(input.device(), s, countIncludePad_, x.rawData(), output.rawData());
  return output;
}

const Tensor& SpatialAveragePooling::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const PoolingShape s = window_.shapeOf(input, *this);
  window_.checkGradOutput(input, gradOutput, s, *this);
  const Tensor g = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  kernelsOf(input.device())
      .pooling.averageUpdateGradInput(input.device(), s, countIncludePad_, g.rawData(), gradInput.rawData());
  return gradInput;
}

}  // namespace nn
