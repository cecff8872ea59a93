// nn::SGD: one pass over the flat buffers on their device (ElementwiseKernels), the update of
// each element in nn/math/Sgd.h.
#include "nn/optim/SGD.h"

#include "nn/backend/Backend.h"
#include "nn/tensor/Error.h"

namespace nn {

SGD::SGD(std::pair<Tensor, Tensor> parameters, SgdOptions options)
    : Optimizer("nn.SGD", std::move(parameters), {"momentum"}), options_(options) {
  checkOptions();
}

float SGD::dampening() const { return options_.dampening.value_or(options_.momentum); }

float SGD::currentLearningRate() const {
  // Torch7 computes this in double (Lua numbers) and rounds it to float for the update.
  return static_cast<float>(static_cast<double>(options_.learningRate) /
                            (1.0 + static_cast<double>(stepCount_) * options_.learningRateDecay));
}

void SGD::checkOptions() const {
  // Note [Optimizer options] in nn/optim/Optimizer.h.
  checkNonNegative("a learning rate", options_.learningRate);
  checkNonNegative("a learning rate decay", options_.learningRateDecay);
  checkNonNegative("a weight decay", options_.weightDecay);
  checkFraction("a momentum", options_.momentum);
  if (options_.dampening) checkFraction("a dampening", *options_.dampening);
  NN_CHECK(!options_.nesterov || (options_.momentum > 0 && dampening() == 0),
           "nn.SGD: Nesterov momentum requires a momentum > 0 and zero dampening, got momentum "
               << options_.momentum << " and dampening " << dampening()
               << (options_.dampening ? "" : " (unset dampening equals the momentum)"));
}

void SGD::step() {
  checkOptions();
  const bool withMomentum = options_.momentum != 0;
  // Zeros, though the first step only writes it: sgdUpdate reads it on every step.
  bool first = false;
  float* velocity = withMomentum ? stateBuffer(0, &first).rawData() : nullptr;
  const math::SgdStep s{currentLearningRate(), options_.weightDecay, options_.momentum,
                        dampening(),           options_.nesterov,    first};
  const Device device = parameters_.device();
  kernelsOf(device).elementwise.sgdStep(device, parameters_.rawData(), gradients_.rawData(),
                                        velocity, parameters_.numel(), s);
  ++stepCount_;
}

}  // namespace nn
