// nn::Adagrad: the step's constants here, the update of each element in nn/math/Optimizers.h.
#include "nn/optim/Adagrad.h"

#include "nn/backend/Backend.h"
#include "nn/math/Optimizers.h"
#include "nn/tensor/Error.h"

namespace nn {

Adagrad::Adagrad(std::pair<Tensor, Tensor> parameters, AdagradOptions options)
    : Optimizer("nn.Adagrad", std::move(parameters), {"adagrad.sum"}), options_(options) {
  checkOptions();
}

void Adagrad::checkOptions() const {
  const AdagradOptions& o = options_;
  // Note [Optimizer options] in nn/optim/Optimizer.h.
  checkNonNegative("a learning rate", o.learningRate);
  checkNonNegative("a learning rate decay", o.learningRateDecay);
  checkNonNegative("an epsilon", o.epsilon);
  checkNonNegative("a weight decay", o.weightDecay);
}

void Adagrad::step() {
  checkOptions();
  const AdagradOptions& o = options_;
  math::AdagradUpdate update;
  update.learningRate =
      static_cast<float>(o.learningRate / (1 + static_cast<double>(stepCount_) * o.learningRateDecay));
  update.epsilon = static_cast<float>(o.epsilon);
  update.weightDecay = static_cast<float>(o.weightDecay);
  const Device device = parameters_.device();
  kernelsOf(device).elementwise.adagradStep(device, parameters_.rawData(), gradients_.rawData(),
                                            stateBuffer(0).rawData(), nullptr, parameters_.numel(), update);
  ++stepCount_;
}

}  // namespace nn
