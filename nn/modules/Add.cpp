// nn::Add: its sizes; the rest is BroadcastParameterModule's.
#include "nn/modules/Add.h"

namespace nn {

NN_REGISTER_MODULE(Add);

namespace {

const std::vector<int64_t>& checked(const std::vector<int64_t>& sizes) {
  bool ok = !sizes.empty();
  for (int64_t s : sizes) ok = ok && s > 0;
  NN_CHECK(ok, "nn.Add: expected positive sizes, got " << shapeString(sizes));
  return sizes;
}

}  // namespace

Add::Add(const Options& options) : WithOptions(options, math::BroadcastOp::kAdd, checked(options.sizes), "bias") {}

}  // namespace nn
