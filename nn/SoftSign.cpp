// nn::SoftSign: the formula is math::activation::SoftSign, the loops its entry of ElementwiseKernels.
#include "nn/SoftSign.h"

#include "nn/Options.h"

namespace nn {

NN_REGISTER_MODULE(SoftSign);

}  // namespace nn
