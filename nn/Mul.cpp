// nn::Mul: a CMul of one element; the rest is ParameterBroadcast's.
#include "nn/Mul.h"

namespace nn {

NN_REGISTER_MODULE(Mul);

Mul::Mul(const Options& options) : WithOptions(options, math::BroadcastOp::kMultiply, std::vector<int64_t>{1}, "weight") {}

}  // namespace nn
