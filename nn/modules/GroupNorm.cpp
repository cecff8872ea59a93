// nn::GroupNorm: its checks and rows here, its passes RowNormalization's, which the kernels
// (NormalizationKernels) see as N * numGroups rows, each a group's C / numGroups channels of
// `positions` values, a channel's values sharing its parameters.
#include "nn/modules/GroupNorm.h"

#include <sstream>


namespace nn {

NN_REGISTER_MODULE(GroupNorm);

GroupNorm::GroupNorm(const Options& options) : WithOptions(options) {
  const auto& [groups, channels, eps, affine] = options_;
  NN_CHECK(groups > 0 && channels > 0,
           toString() << ": expected a positive number of groups and of channels, got " << groups << " groups and "
                      << channels << " channels");
  NN_CHECK(channels % groups == 0, toString() << ": expected the number of channels (" << channels
                                              << ") to be divisible by the number of groups (" << groups << ")");
  NN_CHECK(eps >= 0, toString() << ": expected eps >= 0, got " << eps);
  makeParameters(affine, {channels});
}

std::string GroupNorm::toString() const {
  std::ostringstream s;
  s << typeName() << "(" << options_.numGroups << ", " << options_.numChannels;
  if (options_.eps != 1e-5f) s << ", eps=" << options_.eps;
  if (!options_.affine) s << ", affine=false";
  s << ")";
  return s.str();
}

void GroupNorm::checkInput(const Tensor& input) const {
  NN_CHECK(input.dim() >= 2 && input.size(1) == options_.numChannels,
           toString() << ": expected input of size [N, " << options_.numChannels << ", *], got "
                      << input.shapeString());
  if (options_.affine) checkDevice(input, weight.device(), "input");
}

NormalizationShape GroupNorm::shapeOf(const Tensor& input) const {
  // The input's sizes pass Tensor's checks, so that no product of them overflows.
  int64_t positions = 1;
  for (int d = 2; d < input.dim(); ++d) positions *= input.size(d);
  NormalizationShape shape;
  shape.groups = options_.numGroups;
  shape.rows = input.size(0) * shape.groups;
  shape.positions = positions;
  shape.groupSize = options_.numChannels / shape.groups * positions;
  return shape;
}

}  // namespace nn
