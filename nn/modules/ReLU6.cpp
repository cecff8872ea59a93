// nn::ReLU6: HardTanh's entry of ElementwiseKernels with min 0 and max 6.
#include "nn/modules/ReLU6.h"

namespace nn {

NN_REGISTER_MODULE(ReLU6);

ReLU6::ReLU6(const Options& options)
    : WithOptions(options, Entry::of<math::activation::HardTanh>(), math::ActivationArgs{0.f, 6.f}, options.inplace) {}

}  // namespace nn
