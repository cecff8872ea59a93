// nn::Criterion: checks shared by the criterions.
#include "nn/criterions/Criterion.h"

#include <cmath>

#include "nn/backend/Backend.h"

namespace nn {

int64_t Criterion::checkClassTargets(const Tensor& input, const Tensor& target) {
  NN_CHECK(
      (input.dim() == 1 || input.dim() == 2) && input.numel() > 0,
      toString() << ": expected non-empty input of size [classes] or [batch, classes], got " << input.shapeString());
  const int64_t batch = input.dim() == 1 ? 1 : input.size(0);
  NN_CHECK(target.numel() == batch && target.dim() <= 1, toString() << ": expected target of size [" << batch
                                                                    << "] for input " << input.shapeString() << ", got "
                                                                    << target.shapeString());
  NN_CHECK(target.device() == input.device(),
           toString() << ": expected target on " << input.device().str() << ", got " << target.device().str());
  const Tensor& t = contiguousIn(target, contiguousTargets_);
  backendOf(input.device())
      .checkValues(
          input.device(), t.rawData(), batch, {math::ValueKind::ClassTarget, input.size(input.dim() - 1)},
          [this] { return toString(); }, target.sizes());
  return batch;
}

namespace {

const Tensor& tensorOf(const Criterion& c, const Activity& a, const char* what) {
  NN_CHECK(a.isTensor(), c.toString() << ": expected a tensor as " << what << ", got the table " << a.describe());
  return a.tensor();
}

}  // namespace

float Criterion::updateOutputActivity(const Activity& input, const Activity& target) {
  return updateOutput(tensorOf(*this, input, "input"), tensorOf(*this, target, "target"));
}

const Activity& Criterion::updateGradInputActivity(const Activity& input, const Activity& target) {
  gradInputActivity_.shareTensor(updateGradInput(tensorOf(*this, input, "input"), tensorOf(*this, target, "target")));
  return gradInputActivity_;
}

float* Criterion::lossOn(const Device& device) {
  loss_.resize_({1}, device);
  return loss_.rawData();
}

void Criterion::checkWeights(const Tensor& weights, const char* who) {
  if (weights.numel() == 0) return;
  NN_CHECK(weights.dim() == 1, who << ": expected 1-D weights, got " << weights.shapeString());
  const Tensor host = weights.to(Device());
  for (int64_t i = 0; i < host.numel(); ++i)
    NN_CHECK(std::isfinite(host.data()[i]), who << ": expected finite weights, got " << host.data()[i] << " at " << i);
}

const float* Criterion::weightsOn(const Tensor& weights, const Device& device) {
  deviceWeights_.resize_(weights.sizes(), device);
  deviceWeights_.copy_(weights);
  return deviceWeights_.rawData();
}

float Criterion::readLoss() {
  hostLoss_.resize_({1}, Device());
  hostLoss_.copy_(loss_);
  output = hostLoss_.data()[0];
  return output;
}

}  // namespace nn
