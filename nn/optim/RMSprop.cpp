// nn::RMSprop: the step's constants here, the update of each element in nn/math/Optimizers.h.
#include "nn/optim/RMSprop.h"

#include "nn/backend/Backend.h"
#include "nn/math/Optimizers.h"
#include "nn/tensor/Error.h"

namespace nn {

RMSprop::RMSprop(std::pair<Tensor, Tensor> parameters, RmspropOptions options)
    : Optimizer("nn.RMSprop", std::move(parameters), {"rmsprop.square_avg"}), options_(options) {
  checkOptions();
}

void RMSprop::checkOptions() const {
  const RmspropOptions& o = options_;
  // Note [Optimizer options] in nn/optim/Optimizer.h.
  checkNonNegative("a learning rate", o.learningRate);
  checkFraction("alpha", o.alpha);
  checkNonNegative("an epsilon", o.epsilon);
  checkNonNegative("a weight decay", o.weightDecay);
  checkNonNegative("an initial mean", o.initialMean);
}

void RMSprop::step() {
  checkOptions();
  const RmspropOptions& o = options_;
  math::RmspropUpdate update;
  update.learningRate = static_cast<float>(o.learningRate);
  update.alpha = static_cast<float>(o.alpha);
  update.oneMinusAlpha = static_cast<float>(1 - o.alpha);
  update.epsilon = static_cast<float>(o.epsilon);
  update.weightDecay = static_cast<float>(o.weightDecay);
  const Device device = parameters_.device();
  bool created = false;
  Tensor& meanSquare = stateBuffer(0, &created);
  if (created && o.initialMean != 0) meanSquare.fill_(static_cast<float>(o.initialMean));
  kernelsOf(device).elementwise.rmspropStep(device, parameters_.rawData(), gradients_.rawData(), meanSquare.rawData(),
                                            nullptr, parameters_.numel(), update);
  ++stepCount_;
}

}  // namespace nn
