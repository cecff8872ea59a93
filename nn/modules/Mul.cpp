// nn::Mul: a CMul of one element; the rest is BroadcastParameterModule's.
#include "nn/modules/Mul.h"

namespace nn {

NN_REGISTER_MODULE(Mul);

Mul::Mul(const Options& options) : WithOptions(options, math::BroadcastOp::kMultiply, std::vector<int64_t>{1}, "weight") {}

}  // namespace nn
