// nn::SpatialDropout: a draw per plane; the rest is Dropout's.
#include "nn/modules/SpatialDropout.h"

#include <algorithm>

#include "nn/math/Dropout.h"

namespace nn {

NN_REGISTER_MODULE(SpatialDropout);

void SpatialDropout::checkInput(const Tensor& input) const {
  NN_CHECK(input.dim() == 3 || input.dim() == 4,
           toString() << ": expected input of size [batch, planes, height, width] or [planes, height, width], got "
                      << input.shapeString());
}

void SpatialDropout::drawMask(const Tensor& input, float* mask) {
  const int64_t plane = input.size(input.dim() - 2) * input.size(input.dim() - 1);
  if (plane == 0) return;
  for (int64_t p = 0, planes = input.numel() / plane; p < planes; ++p)
    std::fill_n(mask + p * plane, plane, math::dropoutNoise(generator().uniform(), this->p()));
}

}  // namespace nn
