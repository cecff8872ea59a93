// nn::SiLU: the formula is math::activation::SiLU, the loops its entry of ElementwiseKernels.
#include "nn/modules/SiLU.h"

#include "nn/core/Options.h"

namespace nn {

NN_REGISTER_MODULE(SiLU);

}  // namespace nn
