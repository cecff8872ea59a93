// nn::SpatialUpSamplingNearest: its sizes; the rest is PlaneResampling's.
#include "nn/modules/SpatialUpSamplingNearest.h"

#include "nn/tensor/Checked.h"

namespace nn {

NN_REGISTER_MODULE(SpatialUpSamplingNearest);

SpatialUpSamplingNearest::SpatialUpSamplingNearest(const Options& options)
    : WithOptions(options, &PoolingKernels::upSamplingNearest) {
  NN_CHECK(options_.scale >= 1 && options_.scale <= 1 << 16,
           typeName() << ": expected a scale from 1 to 65536, got " << options_.scale);
}

std::pair<int64_t, int64_t> SpatialUpSamplingNearest::outputSize(const Tensor& input, int64_t height,
                                                                 int64_t width) const {
  // The output's element count is checked where it is sized (Tensor::resize_).
  const auto context = [&] { return toString() + ": the output's size for input " + input.shapeString(); };
  return {checkedProduct({height, options_.scale}, context), checkedProduct({width, options_.scale}, context)};
}

}  // namespace nn
