// nn::SGD: one pass over the flat buffers on their device (ElementwiseKernels), the update of
// each element in nn/math/Sgd.h.
#include "nn/SGD.h"

#include "nn/Error.h"
#include "nn/backend/Backend.h"

namespace nn {

SGD::SGD(std::pair<Tensor, Tensor> parameters, SgdOptions options)
    : parameters_(std::move(parameters.first)), gradients_(std::move(parameters.second)), options_(options) {
  NN_CHECK(gradients_.sizes() == parameters_.sizes(), "nn.SGD: expected gradients of size "
                                                          << parameters_.shapeString() << " like the parameters, got "
                                                          << gradients_.shapeString());
  NN_CHECK(parameters_.isContiguous() && gradients_.isContiguous(),
           "nn.SGD: expected contiguous parameter and gradient buffers (Module::getParameters())");
  NN_CHECK(gradients_.device() == parameters_.device(), "nn.SGD: expected parameters and gradients on one device, got "
                                                            << parameters_.device().str() << " and "
                                                            << gradients_.device().str());
  checkOptions();
}

float SGD::dampening() const { return options_.dampening.value_or(options_.momentum); }

float SGD::currentLearningRate() const {
  // Torch7 computes this in double (Lua numbers) and rounds it to float for the update.
  return static_cast<float>(static_cast<double>(options_.learningRate) /
                            (1.0 + static_cast<double>(stepCount_) * options_.learningRateDecay));
}

void SGD::checkOptions() const {
  NN_CHECK(!options_.nesterov || (options_.momentum > 0 && dampening() == 0),
           "nn.SGD: Nesterov momentum requires a momentum > 0 and zero dampening, got momentum "
               << options_.momentum << " and dampening " << dampening()
               << (options_.dampening ? "" : " (unset dampening equals the momentum)"));
}

void SGD::setMomentumBuffer(const Tensor& buffer) {
  if (buffer.numel() == 0) {
    momentumBuffer_ = Tensor();
    return;
  }
  NN_CHECK(buffer.sizes() == parameters_.sizes(), "nn.SGD: expected a momentum buffer of size "
                                                      << parameters_.shapeString() << ", got " << buffer.shapeString());
  momentumBuffer_.resize_(parameters_.sizes(), parameters_.device());
  momentumBuffer_.copy_(buffer);
}

void SGD::setStepCount(int64_t count) {
  NN_CHECK(count >= 0, "nn.SGD: expected a step count >= 0, got " << count);
  stepCount_ = count;
}

void SGD::step() {
  checkOptions();
  const bool withMomentum = options_.momentum != 0;
  const bool first = withMomentum && !momentumBuffer_.storage();
  // Zeros, though the first step only writes it: sgdUpdate reads it on every step.
  if (first) momentumBuffer_.resize_(parameters_.sizes(), parameters_.device()).zero_();
  const math::SgdStep s{currentLearningRate(), options_.weightDecay, options_.momentum,
                        dampening(),           options_.nesterov,    first};
  const Device device = parameters_.device();
  kernelsOf(device).elementwise.sgdStep(device, parameters_.rawData(), gradients_.rawData(),
                                        withMomentum ? momentumBuffer_.rawData() : nullptr, parameters_.numel(), s);
  ++stepCount_;
}

}  // namespace nn
