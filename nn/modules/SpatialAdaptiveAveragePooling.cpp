// nn::SpatialAdaptiveAveragePooling: its sizes; the rest is PlaneResampling's.
#include "nn/modules/SpatialAdaptiveAveragePooling.h"

#include "nn/tensor/Checked.h"

namespace nn {

NN_REGISTER_MODULE(SpatialAdaptiveAveragePooling);

SpatialAdaptiveAveragePooling::SpatialAdaptiveAveragePooling(const Options& options)
    : WithOptions(options, &PoolingKernels::adaptiveAverage) {
  NN_CHECK(options_.oW > 0 && options_.oH > 0 && options_.oW <= kMaxElements && options_.oH <= kMaxElements,
           typeName() << ": expected an output size from 1 to " << kMaxElements << ", got " << options_.oW << "x"
                      << options_.oH);
}

// Any input size: where the input has fewer cells than the output, windows of one cell repeat
// (as in Torch7 and PyTorch); every window holds at least one cell.
std::pair<int64_t, int64_t> SpatialAdaptiveAveragePooling::outputSize(const Tensor& input, int64_t height,
                                                                      int64_t width) const {
  // The windows' bounds (math::adaptiveEnd) multiply an output size by an input size plus one.
  const auto context = [&] { return toString() + ": the windows of input " + input.shapeString(); };
  checkedProduct({options_.oH, height + 1}, context);
  checkedProduct({options_.oW, width + 1}, context);
  return {options_.oH, options_.oW};
}

}  // namespace nn
