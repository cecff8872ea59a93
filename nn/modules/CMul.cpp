// nn::CMul: its sizes; the rest is BroadcastParameterModule's.
#include "nn/modules/CMul.h"

namespace nn {

NN_REGISTER_MODULE(CMul);

namespace {

const std::vector<int64_t>& checked(const std::vector<int64_t>& sizes) {
  bool ok = !sizes.empty();
  for (int64_t s : sizes) ok = ok && s > 0;
  NN_CHECK(ok, "nn.CMul: expected positive sizes, got " << shapeString(sizes));
  return sizes;
}

}  // namespace

CMul::CMul(const Options& options)
    : WithOptions(options, math::BroadcastOp::kMultiply, checked(options.sizes), "weight") {}

}  // namespace nn
