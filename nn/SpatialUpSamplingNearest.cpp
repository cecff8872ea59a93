// nn::SpatialUpSamplingNearest: its sizes; the rest is PlaneResampling's.
#include "nn/SpatialUpSamplingNearest.h"

#include <limits>

namespace nn {

NN_REGISTER_MODULE(SpatialUpSamplingNearest);

SpatialUpSamplingNearest::SpatialUpSamplingNearest(const Options& options)
    : WithOptions(options, &PoolingKernels::upSamplingNearest) {
  NN_CHECK(options_.scale >= 1 && options_.scale <= 1 << 16,
           typeName() << ": expected a scale from 1 to 65536, got " << options_.scale);
}

std::pair<int64_t, int64_t> SpatialUpSamplingNearest::outputSize(const Tensor& input, int64_t height,
                                                                 int64_t width) const {
  const int64_t limit = std::numeric_limits<int64_t>::max() / options_.scale / options_.scale;
  NN_CHECK(input.numel() <= limit,
           toString() << ": input " << input.shapeString() << " would give an output of over 2^63 elements");
  return {height * options_.scale, width * options_.scale};
}

}  // namespace nn
