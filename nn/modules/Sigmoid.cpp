// nn::Sigmoid: the formula is math::activation::Sigmoid, the loops its entry of ElementwiseKernels.
#include "nn/modules/Sigmoid.h"

#include "nn/core/Options.h"

namespace nn {

NN_REGISTER_MODULE(Sigmoid);

}  // namespace nn
