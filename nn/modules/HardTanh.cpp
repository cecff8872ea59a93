// nn::HardTanh: the formula is math::activation::HardTanh, the loops its entry of
// ElementwiseKernels.
#include "nn/modules/HardTanh.h"

#include <cmath>

namespace nn {

NN_REGISTER_MODULE(HardTanh);

HardTanh::HardTanh(const Options& options)
    : WithOptions(options, Entry::of<math::activation::HardTanh>(), math::ActivationArgs{options.min, options.max},
                  options.inplace) {
  NN_CHECK(std::isfinite(options.min) && std::isfinite(options.max) && options.min < options.max,
           "nn.HardTanh: expected finite min < max, got min " << options.min << " and max " << options.max);
}

}  // namespace nn
