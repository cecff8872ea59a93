// nn::SoftPlus: the formula is math::activation::SoftPlus, the loops its entry of
// ElementwiseKernels.
#include "nn/modules/SoftPlus.h"

#include <cmath>

namespace nn {

NN_REGISTER_MODULE(SoftPlus);

SoftPlus::SoftPlus(const Options& options)
    : WithOptions(options, Entry::of<math::activation::SoftPlus>(), math::ActivationArgs{options.beta, options.threshold},
                  false) {
  NN_CHECK(std::isfinite(options.beta) && options.beta > 0.f && std::isfinite(options.threshold),
           "nn.SoftPlus: expected a finite beta > 0 and a finite threshold, got beta "
               << options.beta << " and threshold " << options.threshold);
}

}  // namespace nn
