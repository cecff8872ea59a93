// nn::LogSigmoid: the formula is math::activation::LogSigmoid, the loops its entry of
// ElementwiseKernels.
#include "nn/modules/LogSigmoid.h"

#include "nn/core/Options.h"

namespace nn {

NN_REGISTER_MODULE(LogSigmoid);

}  // namespace nn
