// nn::LeakyReLU: the formula is math::activation::LeakyReLU, the loops its entry
// of ElementwiseKernels.
#include "nn/modules/LeakyReLU.h"

#include <cmath>

namespace nn {

NN_REGISTER_MODULE(LeakyReLU);

LeakyReLU::LeakyReLU(const Options& options)
    : WithOptions(options, Entry::of<math::activation::LeakyReLU>(), math::ActivationArgs{options.negval}, options.inplace) {
  NN_CHECK(std::isfinite(options.negval), "nn.LeakyReLU: expected a finite negval, got " << options.negval);
  // In place, the backward tells the sign of x from y, which a negative slope would flip.
  NN_CHECK(!options.inplace || options.negval >= 0.f,
           "nn.LeakyReLU: in place needs negval >= 0, got " << options.negval);
}

}  // namespace nn
