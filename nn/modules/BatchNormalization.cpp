// nn::BatchNormalization, also the implementation of SpatialBatchNormalization: checks and
// buffers here, the work in BatchNormKernels (CPU loops or CUDA kernels), which see the input
// as [batch, features, positions] with positions = 1 for a 2-D input.
#include "nn/modules/BatchNormalization.h"

#include <algorithm>
#include <sstream>

#include "nn/backend/Backend.h"
#include "nn/modules/ReLU.h"
#include "nn/tensor/Random.h"

namespace nn {

NN_REGISTER_MODULE(BatchNormalization);

BatchNormalization::BatchNormalization(const Options& options)
    : BatchNormalization("nn.BatchNormalization", options, 2) {}

BatchNormalization::BatchNormalization(const char* name, const Options& options, int inputDim)
    : WithOptions(options), typeName_(name), inputDim_(inputDim) {
  [[maybe_unused]] const auto [nOutput, eps, momentum, affine, sync] = options;
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
  if (options_.sync) s << ", sync";
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
  StatisticsGroup* group = train_ && options_.sync ? currentStatisticsGroup() : nullptr;
  // One value per feature has no variance (and an unbiased variance of 0 / 0); synchronised,
  // the whole batch's count is checked.
  NN_CHECK(
      !train_ || group != nullptr || shape.batch * shape.positions > 1,
      toString() << ": expected more than one value per feature in training mode, got input " << input.shapeString());
  const Tensor x = input.contiguous();
  output.resize_(input.sizes(), input.device());
  if (train_) {
    saveMean_.resize_({options_.nOutput}, input.device());
    saveInvstd_.resize_({options_.nOutput}, input.device());
  }
  gradSumsInput_ = gradSumsGradOutput_ = nullptr;
  syncedCount_ = 0;
  if (group != nullptr)
    syncedOutput(x, *group);
  else
    kernelsOf(input.device()).batchNorm.updateOutput(input.device(), x.rawData(), output.rawData(), shape, state());
  return output;
}

// Note [Synchronised statistics]
// With sync() set, a training pass runs the kernels' phases (BatchNormPhase) with the group's
// sums between them, so that every part of the step normalises by the whole batch's statistics:
//   forward:  sum x per feature -> sum over the group (with the count of values) -> mean;
//             sum (x - mean)^2 -> sum over the group -> biased variance, invstd, the running
//             statistics moved (the variance unbiased over the whole count); then y from them.
//   backward: dotp and gsum per feature -> sum over the group -> gradInput from the totals and
//             the whole count. accGradParameters takes this part's own sums: the table adds the
//             parts' parameter gradients, which makes them the whole batch's.
// Two passes over x for the variance, as on one device, not the sum of squares, whose difference
// with the squared sum cancels digits. The sums cross the host: a few numbers per feature.

std::vector<double>& BatchNormalization::sumOverGroup(const Tensor& sums, StatisticsGroup& group, double extra,
                                                      bool gradients) {
  const int64_t n = sums.numel();
  hostStage_.resize_({n});
  hostStage_.copy_(sums);
  const float* host = hostStage_.data();
  totals_.assign(host, host + n);
  totals_.push_back(extra);
  if (gradients)
    group.allReduceGradientSum(totals_.data(), totals_.size());
  else
    group.allReduceSum(totals_.data(), totals_.size());
  return totals_;
}

namespace {

// Reads `from` (any device) into `into` through the host tensor `stage`, reusing both's memory.
void download(const Tensor& from, Tensor& stage, std::vector<float>& into) {
  stage.resize_({from.numel()});
  stage.copy_(from);
  into.assign(stage.data(), stage.data() + from.numel());
}

// Writes `values` into `into` (any device) through the host tensor `stage`.
void upload(const std::vector<float>& values, Tensor& stage, Tensor& into) {
  stage.resize_({static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), stage.data());
  into.copy_(stage);
}

}  // namespace

void BatchNormalization::syncedOutput(const Tensor& x, StatisticsGroup& group) {
  const Device device = x.device();
  const BatchNormKernels& kernels = kernelsOf(device).batchNorm;
  const BatchNormShape shape = shapeOf(x);
  const int64_t features = options_.nOutput;
  statSums_.resize_({features}, device);
  BatchNormState st = state();
  st.statSums = statSums_.rawData();

  st.phase = BatchNormPhase::sumValues;
  kernels.updateOutput(device, x.rawData(), output.rawData(), shape, st);
  const std::vector<double>& sums = sumOverGroup(statSums_, group, static_cast<double>(shape.batch * shape.positions));
  const double count = sums[static_cast<size_t>(features)];
  NN_CHECK(count > 1, toString() << ": expected more than one value per feature in training mode over the "
                                 << "synchronised batch, got " << count);
  syncedCount_ = static_cast<int64_t>(count);
  std::vector<float>& mean = hostMean_;
  mean.resize(static_cast<size_t>(features));
  for (int64_t c = 0; c < features; ++c) mean[c] = math::batchNormAverage(sums[c], syncedCount_);
  upload(mean, hostStage_, saveMean_);

  st.phase = BatchNormPhase::sumSquares;
  kernels.updateOutput(device, x.rawData(), output.rawData(), shape, st);
  const std::vector<double>& squares = sumOverGroup(statSums_, group, 0);
  hostValues_.resize(static_cast<size_t>(features));
  for (int64_t c = 0; c < features; ++c)
    hostValues_[c] = math::batchNormInvstd(math::batchNormAverage(squares[c], syncedCount_), options_.eps);
  upload(hostValues_, hostStage_, saveInvstd_);

  // The running statistics, as the whole pass moves them on one device.
  download(runningMean, hostStage_, hostRunning_);
  for (int64_t c = 0; c < features; ++c)
    hostRunning_[c] = math::batchNormRunningMean(hostRunning_[c], mean[c], options_.momentum);
  upload(hostRunning_, hostStage_, runningMean);
  download(runningVar, hostStage_, hostRunning_);
  for (int64_t c = 0; c < features; ++c)
    hostRunning_[c] = math::batchNormRunningVar(hostRunning_[c], squares[c], syncedCount_, options_.momentum);
  upload(hostRunning_, hostStage_, runningVar);

  st.phase = BatchNormPhase::fromSums;
  kernels.updateOutput(device, x.rawData(), output.rawData(), shape, st);
}

void BatchNormalization::syncedGradInput(const Tensor& x, const Tensor& g, StatisticsGroup& group) {
  const Device device = x.device();
  const BatchNormKernels& kernels = kernelsOf(device).batchNorm;
  const BatchNormShape shape = shapeOf(x);
  const int64_t features = options_.nOutput;
  // This part's sums stay in gradSums_ for accGradParameters; the totals go to groupGradSums_.
  gradSums_.resize_({2, features}, device);
  BatchNormState st = state();
  st.gradSums = gradSums_.rawData();
  st.phase = BatchNormPhase::sumGradients;
  kernels.updateGradInput(device, x.rawData(), g.rawData(), gradInput.rawData(), shape, st);
  const std::vector<double>& totals = sumOverGroup(gradSums_, group, 0, /*gradients=*/true);
  hostValues_.assign(totals.begin(), totals.end() - 1);
  groupGradSums_.resize_({2, features}, device);
  upload(hostValues_, hostStage_, groupGradSums_);
  st.gradSums = groupGradSums_.rawData();
  st.phase = BatchNormPhase::fromSums;
  st.count = syncedCount_;
  kernels.updateGradInput(device, x.rawData(), g.rawData(), gradInput.rawData(), shape, st);
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
  statSums_.set_(Tensor());
  groupGradSums_.set_(Tensor());
  hostStage_.set_(Tensor());
  syncedCount_ = 0;
  Module::clearState();
}

const Tensor& BatchNormalization::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  checkInput(input);
  checkGradOutput(input, gradOutput);
  const Tensor x = input.contiguous();
  const Tensor g = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  StatisticsGroup* group = train_ && syncedCount_ > 0 ? currentStatisticsGroup() : nullptr;
  const bool sums = train_ && (options_.affine || group != nullptr);
  if (sums) gradSums_.resize_({2, options_.nOutput}, input.device());
  if (group != nullptr)
    syncedGradInput(x, g, *group);
  else
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

void setSyncBatchNorm(Module& module, bool sync) {
  module.apply([sync](Module& m) {
    if (auto* bn = dynamic_cast<BatchNormalization*>(&m)) bn->setSync(sync);
  });
}

}  // namespace nn
