// nn::Tanh: the formula is math::activation::Tanh, the loops its entry of ElementwiseKernels.
#include "nn/modules/Tanh.h"

#include "nn/core/Options.h"

namespace nn {

NN_REGISTER_MODULE(Tanh);

}  // namespace nn
