// nn::BatchNormalization, also the implementation of SpatialBatchNormalization: checks and
// buffers here, the work in BatchNormKernels (CPU loops or CUDA kernels), which see the input
// as [batch, features, positions] with positions = 1 for a 2-D input.
#include "nn/modules/BatchNormalization.h"

#include <sstream>

#include "nn/backend/Backend.h"
#include "nn/core/Random.h"
#include "nn/modules/ReLU.h"

namespace nn {

NN_REGISTER_MODULE(BatchNormalization);

BatchNormalization::BatchNormalization(const Options& options)
    : BatchNormalization("nn.BatchNormalization", options, 2) {}

BatchNormalization::BatchNormalization(const char* name, const Options& options, int inputDim)
    : WithOptions(options), typeName_(name), inputDim_(inputDim) {
  const auto [nOutput, eps, momentum, affine] = options;
  NN_CHECK(nOutput > 0, typeName_ << ": expected a positive number of features, got " << nOutput);
  NN_CHECK(eps >= 0, typeName_ << ": expected eps >= 0, got " << eps);
  if (affine) {
    weight.resize_({nOutput});
    bias.resize_({nOutput});
    gradWeight = Tensor::zeros({nOutput});
    gradBias = Tensor::zeros({nOutput});
    registerParameter("weight", &weight, &gradWeight);
    registerParameter("bias", &bias, &gradBias);
  }
  runningMean.resize_({nOutput});
  runningVar.resize_({nOutput});
  registerBuffer("running_mean", &runningMean);
  registerBuffer("running_var", &runningVar);
  reset();
}

void BatchNormalization::reset() {
  if (options_.affine) {
    weight.uniform_(defaultGenerator(), 0.f, 1.f);
    bias.zero_();
  }
  runningMean.zero_();
  runningVar.fill_(1.f);
}

std::string BatchNormalization::toString() const {
  std::ostringstream s;
  s << typeName() << "(" << options_.nOutput;
  if (options_.eps != 1e-5f) s << ", eps=" << options_.eps;
  if (options_.momentum != 0.1f) s << ", momentum=" << options_.momentum;
  if (!options_.affine) s << ", affine=false";
  s << ")";
  return s.str();
}

void BatchNormalization::checkInput(const Tensor& input) const {
  NN_CHECK(input.dim() == inputDim_ && input.size(1) == options_.nOutput,
           toString() << ": expected input of size [batch, " << options_.nOutput
                      << (inputDim_ == 4 ? ", height, width]" : "]") << ", got " << input.shapeString());
  checkDevice(input, runningMean.device(), "input");
}

void BatchNormalization::checkGradOutput(const Tensor& input, const Tensor& gradOutput) const {
  NN_CHECK(gradOutput.sizes() == input.sizes(), toString() << ": expected gradOutput of size " << input.shapeString()
                                                           << ", got " << gradOutput.shapeString());
  checkDevice(gradOutput, runningMean.device(), "gradOutput");
  NN_CHECK(!train_ || saveMean_.hasSizes({options_.nOutput}),
           toString() << ": backward in training mode needs a forward in training mode first");
}

BatchNormShape BatchNormalization::shapeOf(const Tensor& input) const {
  return {input.size(0), options_.nOutput, inputDim_ == 4 ? input.size(2) * input.size(3) : 1};
}

BatchNormState BatchNormalization::state() {
  return {options_.affine ? weight.rawData() : nullptr,
          options_.affine ? bias.rawData() : nullptr,
          runningMean.rawData(),
          runningVar.rawData(),
          saveMean_.rawData(),
          saveInvstd_.rawData(),
          options_.eps,
          options_.momentum,
          train_,
          gradSums_.numel() != 0 ? gradSums_.rawData() : nullptr,
          false,
          reluAfter_};
}

const Tensor& BatchNormalization::updateOutput(const Tensor& input) {
  checkInput(input);
  const BatchNormShape shape = shapeOf(input);
  // One value per feature has no variance (and an unbiased variance of 0 / 0).
  NN_CHECK(
      !train_ || shape.batch * shape.positions > 1,
      toString() << ": expected more than one value per feature in training mode, got input " << input.shapeString());
  const Tensor x = input.contiguous();
  output.resize_(input.sizes(), input.device());
  if (train_) {
    saveMean_.resize_({options_.nOutput}, input.device());
    saveInvstd_.resize_({options_.nOutput}, input.device());
  }
  gradSumsInput_ = gradSumsGradOutput_ = nullptr;
  kernelsOf(input.device()).batchNorm.updateOutput(input.device(), x.rawData(), output.rawData(), shape, state());
  return output;
}

bool BatchNormalization::canTakeNext(const Module& next) const {
  const auto* relu = dynamic_cast<const ReLU*>(&next);
  return relu != nullptr && relu->inplace();
}

void BatchNormalization::takeNext(Module& next, bool taken) {
  reluAfter_ = taken;
  static_cast<ReLU&>(next).setAppliedBefore(taken);
}

void BatchNormalization::clearState() {
  saveMean_.set_(Tensor());
  saveInvstd_.set_(Tensor());
  gradSums_.set_(Tensor());
  gradSumsInput_ = gradSumsGradOutput_ = nullptr;
  Module::clearState();
}

const Tensor& BatchNormalization::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  checkInput(input);
  checkGradOutput(input, gradOutput);
  const Tensor x = input.contiguous();
  const Tensor g = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  const bool sums = train_ && options_.affine;
  if (sums) gradSums_.resize_({2, options_.nOutput}, input.device());
  kernelsOf(input.device())
      .batchNorm.updateGradInput(input.device(), x.rawData(), g.rawData(), gradInput.rawData(), shapeOf(input),
                                 state());
  gradSumsInput_ = sums ? x.rawData() : nullptr;
  gradSumsGradOutput_ = sums ? g.rawData() : nullptr;
  gradSumsReLUAfter_ = reluAfter_;
  return gradInput;
}

void BatchNormalization::accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) {
  if (!options_.affine) return;
  checkInput(input);
  checkGradOutput(input, gradOutput);
  const Tensor x = input.contiguous();
  const Tensor g = gradOutput.contiguous();
  BatchNormState st = state();
  st.gradSumsValid =
      train_ && gradSumsInput_ == x.rawData() && gradSumsGradOutput_ == g.rawData() && gradSumsReLUAfter_ == reluAfter_;
  gradSumsInput_ = gradSumsGradOutput_ = nullptr;
  kernelsOf(input.device())
      .batchNorm.accGradParameters(input.device(), x.rawData(), g.rawData(), gradWeight.rawData(), gradBias.rawData(),
                                   shapeOf(input), st, scale);
}

}  // namespace nn
