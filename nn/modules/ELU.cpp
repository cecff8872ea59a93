// nn::ELU: the formula is math::activation::ELU, the loops its entry of ElementwiseKernels.
#include "nn/modules/ELU.h"

#include <cmath>

namespace nn {

NN_REGISTER_MODULE(ELU);

ELU::ELU(const Options& options)
    : WithOptions(options, Entry::of<math::activation::ELU>(), math::ActivationArgs{options.alpha}, options.inplace) {
  NN_CHECK(std::isfinite(options.alpha), "nn.ELU: expected a finite alpha, got " << options.alpha);
  // In place, the backward reads y for x, whose sign a negative alpha would flip.
  NN_CHECK(!options.inplace || options.alpha >= 0.f, "nn.ELU: in place needs alpha >= 0, got " << options.alpha);
}

}  // namespace nn
