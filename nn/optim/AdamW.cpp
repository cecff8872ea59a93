// nn::AdamW: the step's constants here, the update of each element in nn/math/Optimizers.h
// (math::AdamUpdate, which Adam shares).
#include "nn/optim/AdamW.h"

#include <cmath>

#include "nn/math/Optimizers.h"
#include "nn/tensor/Error.h"

namespace nn {

AdamW::AdamW(std::pair<Tensor, Tensor> parameters, AdamWOptions options)
    : Optimizer("nn.AdamW", std::move(parameters), {"adamw.m", "adamw.v"}), options_(options) {
  checkOptions();
}

void AdamW::checkOptions() const {
  const AdamWOptions& o = options_;
  // Note [Optimizer options] in nn/optim/Optimizer.h.
  checkAdamOptions(o.learningRate, o.learningRateDecay, o.beta1, o.beta2, o.epsilon, o.weightDecay);
}

void AdamW::step() {
  checkOptions();
  const AdamWOptions& o = options_;
  const double learningRate = o.learningRate / (1 + static_cast<double>(stepCount_) * o.learningRateDecay);
  const double t = static_cast<double>(stepCount_ + 1);
  math::AdamUpdate update;
  // PyTorch's Adam with its epsilon after the bias correction (AdamOptions::pytorchEpsilon).
  update.stepSize = static_cast<float>(learningRate / (1 - std::pow(o.beta1, t)));
  update.divisor = static_cast<float>(std::sqrt(1 - std::pow(o.beta2, t)));
  update.shrink = static_cast<float>(1 - learningRate * o.weightDecay);
  // The bias correction scales the learning rate (by 1 / (1 - beta1) = 10 at the first step), and
  // the decay multiplies it: a float may not hold what a learning rate a float holds becomes.
  NN_CHECK(std::isfinite(update.stepSize) && std::isfinite(update.shrink),
           "nn.AdamW: the step size or the weight decay's factor at step "
               << stepCount_ + 1 << " of learning rate " << o.learningRate << " and weight decay " << o.weightDecay
               << " is beyond a float's range");
  update.weightDecay = 0.f;  // decoupled: in shrink, not in the gradient
  adamStep(update, o.beta1, o.beta2, o.epsilon);
}

}  // namespace nn
