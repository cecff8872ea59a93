// nn::SoftSign: the formula is math::activation::SoftSign, the loops its entry of ElementwiseKernels.
#include "nn/modules/SoftSign.h"

#include "nn/core/Options.h"

namespace nn {

NN_REGISTER_MODULE(SoftSign);

}  // namespace nn
