// nn::ReLU: the formula is math::activation::ReLU, the loops the `relu` entry of ElementwiseKernels.
#include "nn/ReLU.h"

namespace nn {

NN_REGISTER_MODULE(ReLU);

ReLU::ReLU(const Options& options)
    : WithOptions(options, &ElementwiseKernels::relu, math::ActivationArgs{}, options.inplace) {}

std::string ReLU::toString() const { return options_.inplace ? "nn.ReLU(true)" : "nn.ReLU"; }

}  // namespace nn
