// nn::SpatialMaxPooling: shapes and buffers here, the work in PoolingKernels (nn/backend/PoolingKernels.h).
#include "nn/modules/SpatialMaxPooling.h"

#include "nn/backend/Backend.h"
#include "nn/core/Options.h"

namespace nn {

NN_REGISTER_MODULE(SpatialMaxPooling);

// Indices are stored as floats, exact up to 2^24.
static constexpr int64_t kMaxPlaneSize = int64_t{1} << 24;

SpatialMaxPooling::SpatialMaxPooling(int64_t kW, int64_t kH, int64_t dW, int64_t dH, int64_t padW, int64_t padH)
    : SpatialMaxPooling(PoolingWindow{kW, kH, dW == 0 ? kW : dW, dH == 0 ? kH : dH, padW, padH}) {}

SpatialMaxPooling::SpatialMaxPooling(const PoolingWindow& window) : WithOptions(window) {
  options_.check("nn.SpatialMaxPooling");
}

SpatialMaxPooling& SpatialMaxPooling::ceil() {
  options_.ceilMode = true;
  return *this;
}

SpatialMaxPooling& SpatialMaxPooling::floor() {
  options_.ceilMode = false;
  return *this;
}

std::string SpatialMaxPooling::toString() const { return "nn.SpatialMaxPooling(" + options_.describe() + ")"; }

PoolingShape SpatialMaxPooling::checkInput(const Tensor& input) const {
  const PoolingShape s = options_.shapeOf(input, *this);
  NN_CHECK(s.height * s.width <= kMaxPlaneSize, toString() << ": expected input planes of at most " << kMaxPlaneSize
                                                           << " cells, got " << input.shapeString());
  return s;
}

const Tensor& SpatialMaxPooling::updateOutput(const Tensor& input) {
  const PoolingShape s = checkInput(input);
  const Tensor x = input.contiguous();
  options_.resizeLikeOutput(output, input, s);
  options_.resizeLikeOutput(indices, input, s);
  forwardSizes_ = input.sizes();
  kernelsOf(input.device())
      .pooling.maxUpdateOutput(input.device(), s, x.rawData(), output.rawData(), indices.rawData());
  return output;
}

const Tensor& SpatialMaxPooling::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  const PoolingShape s = checkInput(input);
  options_.checkGradOutput(input, gradOutput, s, *this);
  NN_CHECK(forwardSizes_ == input.sizes() && indices.sizes() == gradOutput.sizes() &&
               indices.device() == input.device(),
           toString() << ": backward needs a forward on this input (" << input.shapeString() << ") first");
  const Tensor g = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  const bool found =
      kernelsOf(input.device())
          .pooling.maxUpdateGradInput(input.device(), s, g.rawData(), indices.rawData(), gradInput.rawData());
  NN_CHECK(found, toString() << ": backward needs a forward on this input (" << input.shapeString() << ") first");
  return gradInput;
}

void SpatialMaxPooling::clearState() {
  Module::clearState();
  indices.set_(Tensor());
  forwardSizes_.clear();
}

}  // namespace nn
