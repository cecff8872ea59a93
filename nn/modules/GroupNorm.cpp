// nn::GroupNorm: checks and buffers here, the work in NormalizationKernels (CPU loops or CUDA
// kernels), which see the input [N, C, *] as N * numGroups rows, each a group's C / numGroups
// channels of `positions` values, a channel's values sharing its parameters.
#include "nn/modules/GroupNorm.h"

#include <sstream>

#include "nn/backend/Backend.h"

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
  if (affine) {
    weight.resize_({channels});
    bias.resize_({channels});
    gradWeight = Tensor::zeros({channels});
    gradBias = Tensor::zeros({channels});
    registerParameter("weight", &weight, &gradWeight);
    registerParameter("bias", &bias, &gradBias);
  }
  reset();
}

void GroupNorm::reset() {
  if (!options_.affine) return;
  weight.fill_(1.f);
  bias.zero_();
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

void GroupNorm::checkGradOutput(const Tensor& input, const Tensor& gradOutput) const {
  NN_CHECK(gradOutput.sizes() == input.sizes(), toString() << ": expected gradOutput of size " << input.shapeString()
                                                           << ", got " << gradOutput.shapeString());
  checkDevice(gradOutput, input.device(), "gradOutput");
  NN_CHECK(saveMean_.hasSizes({shapeOf(input).rows}) && saveMean_.device() == input.device(),
           toString() << ": backward needs a forward of the input first");
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

NormalizationState GroupNorm::state() {
  const bool affine = options_.affine;
  return {affine ? weight.rawData() : nullptr, affine ? bias.rawData() : nullptr, saveMean_.rawData(),
          saveInvstd_.rawData(), options_.eps};
}

const Tensor& GroupNorm::updateOutput(const Tensor& input) {
  checkInput(input);
  const NormalizationShape shape = shapeOf(input);
  const Tensor x = input.contiguous();
  output.resize_(input.sizes(), input.device());
  saveMean_.resize_({shape.rows}, input.device());
  saveInvstd_.resize_({shape.rows}, input.device());
  kernelsOf(input.device()).normalization.updateOutput(input.device(), x.rawData(), output.rawData(), shape, state());
  return output;
}

const Tensor& GroupNorm::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  checkInput(input);
  checkGradOutput(input, gradOutput);
  const Tensor x = input.contiguous();
  const Tensor g = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  kernelsOf(input.device())
      .normalization.updateGradInput(input.device(), x.rawData(), g.rawData(), gradInput.rawData(), shapeOf(input),
                                     state());
  return gradInput;
}

void GroupNorm::accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) {
  if (!options_.affine) return;
  checkInput(input);
  checkGradOutput(input, gradOutput);
  const Tensor x = input.contiguous();
  const Tensor g = gradOutput.contiguous();
  kernelsOf(input.device())
      .normalization.accGradParameters(input.device(), x.rawData(), g.rawData(), gradWeight.rawData(),
                                       gradBias.rawData(), shapeOf(input), state(), scale);
}

void GroupNorm::clearState() {
  saveMean_.set_(Tensor());
  saveInvstd_.set_(Tensor());
  Module::clearState();
}

}  // namespace nn
