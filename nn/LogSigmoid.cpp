// nn::LogSigmoid: the formula is math::activation::LogSigmoid, the loops its entry of
// ElementwiseKernels.
#include "nn/LogSigmoid.h"

#include "nn/Options.h"

namespace nn {

NN_REGISTER_MODULE(LogSigmoid);

}  // namespace nn
