// nn::Tanh: the formula is math::activation::Tanh, the loops its entry of ElementwiseKernels.
#include "nn/Tanh.h"

#include "nn/Options.h"

namespace nn {

NN_REGISTER_MODULE(Tanh);

}  // namespace nn
