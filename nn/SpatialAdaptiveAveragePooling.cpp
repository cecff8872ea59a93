// nn::SpatialAdaptiveAveragePooling: its sizes; the rest is PlaneResampling's.
#include "nn/SpatialAdaptiveAveragePooling.h"

namespace nn {

NN_REGISTER_MODULE(SpatialAdaptiveAveragePooling);

SpatialAdaptiveAveragePooling::SpatialAdaptiveAveragePooling(const Options& options)
    : WithOptions(options, &PoolingKernels::adaptiveAverage) {
  NN_CHECK(options_.oW > 0 && options_.oH > 0,
           typeName() << ": expected a positive output size, got " << options_.oW << "x" << options_.oH);
}

// Any input size: where the input has fewer cells than the output, windows of one cell repeat
// (as in Torch7 and PyTorch); every window holds at least one cell.
std::pair<int64_t, int64_t> SpatialAdaptiveAveragePooling::outputSize(const Tensor&, int64_t, int64_t) const {
  return {options_.oH, options_.oW};
}

}  // namespace nn
