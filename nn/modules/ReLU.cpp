// nn::ReLU: the formula is math::activation::ReLU, the loops its entry of ElementwiseKernels.
#include "nn/modules/ReLU.h"

namespace nn {

NN_REGISTER_MODULE(ReLU);

ReLU::ReLU(const Options& options)
    : WithOptions(options, Entry::of<math::activation::ReLU>(), math::ActivationArgs{}, options.inplace) {}

std::string ReLU::toString() const { return options_.inplace ? "nn.ReLU(true)" : "nn.ReLU"; }

}  // namespace nn
