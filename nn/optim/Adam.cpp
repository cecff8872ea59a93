// nn::Adam: the step's constants here, the update of each element in nn/math/Optimizers.h.
#include "nn/optim/Adam.h"

#include <cmath>

#include "nn/math/Optimizers.h"
#include "nn/tensor/Error.h"

namespace nn {

Adam::Adam(std::pair<Tensor, Tensor> parameters, AdamOptions options)
    : Optimizer("nn.Adam", std::move(parameters), {"adam.m", "adam.v"}), options_(options) {
  checkOptions();
}

void Adam::checkOptions() const {
  const AdamOptions& o = options_;
  // Note [Optimizer options] in nn/optim/Optimizer.h.
  checkAdamOptions(o.learningRate, o.learningRateDecay, o.beta1, o.beta2, o.epsilon, o.weightDecay);
}

void Adam::step() {
  checkOptions();
  const AdamOptions& o = options_;
  const double learningRate = o.learningRate / (1 + static_cast<double>(stepCount_) * o.learningRateDecay);
  const double t = static_cast<double>(stepCount_ + 1);
  const double correction1 = 1 - std::pow(o.beta1, t);
  const double correction2 = std::sqrt(1 - std::pow(o.beta2, t));
  math::AdamUpdate update;
  update.stepSize = static_cast<float>(o.pytorchEpsilon ? learningRate / correction1
                                                        : learningRate * correction2 / correction1);
  // The bias corrections scale the learning rate (PyTorch's form by 1 / (1 - beta1) = 10 at
  // the first step): a float may not hold what a learning rate a float holds becomes.
  NN_CHECK(std::isfinite(update.stepSize), "nn.Adam: the step size at step " << stepCount_ + 1 << " of learning rate "
                                                                             << o.learningRate
                                                                             << " is beyond a float's range");
  update.divisor = o.pytorchEpsilon ? static_cast<float>(correction2) : 1.f;
  update.weightDecay = static_cast<float>(o.weightDecay);
  adamStep(update, o.beta1, o.beta2, o.epsilon);
}

}  // namespace nn
