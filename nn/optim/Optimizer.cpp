// nn::Optimizer: the buffers' checks and state.
#include "nn/optim/Optimizer.h"

#include <cmath>
#include <limits>

#include "nn/backend/Backend.h"
#include "nn/math/Optimizers.h"
#include "nn/tensor/Error.h"

namespace nn {

Optimizer::Optimizer(std::string module, std::pair<Tensor, Tensor> parameters, std::vector<std::string> stateNames)
    : parameters_(std::move(parameters.first)), gradients_(std::move(parameters.second)), module_(std::move(module)) {
  NN_CHECK(gradients_.sizes() == parameters_.sizes(), module_ << ": expected gradients of size "
                                                              << parameters_.shapeString()
                                                              << " like the parameters, got " << gradients_.shapeString());
  NN_CHECK(parameters_.isContiguous() && gradients_.isContiguous(),
           module_ << ": expected contiguous parameter and gradient buffers (Module::getParameters())");
  NN_CHECK(gradients_.device() == parameters_.device(), module_ << ": expected parameters and gradients on one device, got "
                                                                << parameters_.device().str() << " and "
                                                                << gradients_.device().str());
  for (std::string& name : stateNames) state_.emplace_back(std::move(name), Tensor());
}

void Optimizer::checkNonNegative(const char* what, double value) const {
  NN_CHECK(std::isfinite(value) && value >= 0, module_ << ": expected " << what << " >= 0, got " << value);
  NN_CHECK(value <= std::numeric_limits<float>::max(), module_ << ": expected " << what << " of at most "
                                                               << std::numeric_limits<float>::max()
                                                               << " (the step computes in float), got " << value);
}

void Optimizer::checkFraction(const char* what, double value, bool oneIncluded) const {
  NN_CHECK(value >= 0 && (oneIncluded ? value <= 1 : value < 1),
           module_ << ": expected " << what << " in [0, 1" << (oneIncluded ? "]" : ")") << ", got " << value);
}

void Optimizer::checkAdamOptions(double learningRate, double learningRateDecay, double beta1, double beta2,
                                 double epsilon, double weightDecay) const {
  checkNonNegative("a learning rate", learningRate);
  checkNonNegative("a learning rate decay", learningRateDecay);
  checkFraction("beta1", beta1, false);
  checkFraction("beta2", beta2, false);
  checkNonNegative("an epsilon", epsilon);
  checkNonNegative("a weight decay", weightDecay);
}

void Optimizer::adamStep(math::AdamUpdate& update, double beta1, double beta2, double epsilon) {
  update.beta1 = static_cast<float>(beta1);
  update.oneMinusBeta1 = static_cast<float>(1 - beta1);
  update.beta2 = static_cast<float>(beta2);
  update.oneMinusBeta2 = static_cast<float>(1 - beta2);
  update.epsilon = static_cast<float>(epsilon);
  float* m = stateBuffer(0).rawData();
  float* v = stateBuffer(1).rawData();
  const Device device = parameters_.device();
  kernelsOf(device).elementwise.adamStep(device, parameters_.rawData(), gradients_.rawData(), m, v,
                                         parameters_.numel(), update);
  ++stepCount_;
}

void Optimizer::setStepCount(int64_t count) {
  NN_CHECK(count >= 0, module_ << ": expected a step count >= 0, got " << count);
  stepCount_ = count;
}

void Optimizer::setState(const std::string& name, const Tensor& value) {
  for (auto& [key, buffer] : state_) {
    if (key != name) continue;
    if (value.numel() == 0) {
      buffer = Tensor();
      return;
    }
    NN_CHECK(value.numel() == parameters_.numel(), module_ << ": expected a '" << name << "' buffer of size "
                                                           << parameters_.shapeString() << ", got "
                                                           << value.shapeString());
    buffer.resize_(parameters_.sizes(), parameters_.device());
    buffer.copy_(value.contiguous().view(parameters_.sizes()));
    return;
  }
  std::string known;
  for (const auto& entry : state_) known += (known.empty() ? "'" : ", '") + entry.first + "'";
  NN_CHECK(false, module_ << ": no state '" << name << "'; its state is " << (known.empty() ? "none" : known));
}

Tensor& Optimizer::stateBuffer(size_t i, bool* created) {
  Tensor& buffer = state_.at(i).second;
  const bool empty = !buffer.storage();
  if (empty) buffer.resize_(parameters_.sizes(), parameters_.device()).zero_();
  // The module moved since the buffer was made (Module::to moves the parameters, which this
  // shares, but not the state): the state follows them, as it was.
  if (!empty && buffer.device() != parameters_.device()) buffer = buffer.to(parameters_.device());
  if (created) *created = empty;
  return buffer;
}

}  // namespace nn
