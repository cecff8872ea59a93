// nn::BatchNormalization on the CPU, also the implementation of SpatialBatchNormalization:
// the input is seen as [batch, features, positions] with positions = 1 for a 2-D input.
#include "nn/BatchNormalization.h"

#include <sstream>

#include "nn/Random.h"
#include "nn/math/BatchNorm.h"

namespace nn {

NN_REGISTER_MODULE(BatchNormalization);

BatchNormalization::BatchNormalization(int64_t nOutput, float eps, float momentum, bool affine)
    : BatchNormalization("nn.BatchNormalization", nOutput, eps, momentum, affine, 2) {}

BatchNormalization::BatchNormalization(const char* name, int64_t nOutput, float eps, float momentum, bool affine,
                                       int inputDim)
    : typeName_(name), nOutput_(nOutput), eps_(eps), momentum_(momentum), affine_(affine), inputDim_(inputDim) {
  NN_CHECK(nOutput > 0, typeName_ << ": expected a positive number of features, got " << nOutput);
  NN_CHECK(eps >= 0, typeName_ << ": expected eps >= 0, got " << eps);
  if (affine_) {
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

ModulePtr BatchNormalization::create(const Config& c, std::vector<ModulePtr>) {
  return std::make_shared<BatchNormalization>(c.integer("nOutput"), static_cast<float>(c.number("eps")),
                                              static_cast<float>(c.number("momentum")), c.flag("affine"));
}

Config BatchNormalization::config() const {
  return Config().set("nOutput", nOutput_).set("eps", eps_).set("momentum", momentum_).set("affine", affine_);
}

void BatchNormalization::reset() {
  if (affine_) {
    weight.uniform_(defaultGenerator(), 0.f, 1.f);
    bias.zero_();
  }
  runningMean.zero_();
  runningVar.fill_(1.f);
}

std::string BatchNormalization::toString() const {
  std::ostringstream s;
  s << typeName() << "(" << nOutput_;
  if (eps_ != 1e-5f) s << ", eps=" << eps_;
  if (momentum_ != 0.1f) s << ", momentum=" << momentum_;
  if (!affine_) s << ", affine=false";
  s << ")";
  return s.str();
}

void BatchNormalization::checkInput(const Tensor& input) const {
  NN_CHECK(input.dim() == inputDim_ && input.size(1) == nOutput_,
           toString() << ": expected input of size [batch, " << nOutput_ << (inputDim_ == 4 ? ", height, width]" : "]")
                      << ", got " << input.shapeString());
  checkDevice(input, runningMean.device(), "input");
}

void BatchNormalization::checkGradOutput(const Tensor& input, const Tensor& gradOutput) const {
  NN_CHECK(gradOutput.sizes() == input.sizes(), toString() << ": expected gradOutput of size " << input.shapeString()
                                                           << ", got " << gradOutput.shapeString());
  checkDevice(gradOutput, runningMean.device(), "gradOutput");
  NN_CHECK(!train_ || saveMean_.hasSizes({nOutput_}),
           toString() << ": backward in training mode needs a forward in training mode first");
}

int64_t BatchNormalization::positions(const Tensor& input) const {
  return inputDim_ == 4 ? input.size(2) * input.size(3) : 1;
}

const Tensor& BatchNormalization::updateOutput(const Tensor& input) {
  checkInput(input);
  const int64_t batch = input.size(0);
  const int64_t positions = this->positions(input);
  const int64_t m = batch * positions;
  // One value per feature has no variance (and an unbiased variance of 0 / 0).
  NN_CHECK(!train_ || m > 1, toString() << ": expected more than one value per feature in training mode, got input "
                                        << input.shapeString());
  const Tensor contiguousInput = input.contiguous();
  output.resize_(input.sizes(), input.device());
  const float* x = contiguousInput.data();
  float* y = output.data();
  float* runMean = runningMean.data();
  float* runVar = runningVar.data();
  if (train_) {
    saveMean_.resize_({nOutput_}, input.device());
    saveInvstd_.resize_({nOutput_}, input.device());
  }
  for (int64_t c = 0; c < nOutput_; ++c) {
    float mean, invstd;
    if (train_) {
      double sum = 0;
      for (int64_t n = 0; n < batch; ++n) {
        const float* xc = x + (n * nOutput_ + c) * positions;
        for (int64_t p = 0; p < positions; ++p) sum += xc[p];
      }
      mean = math::batchNormAverage(sum, m);
      double sumSquares = 0;
      for (int64_t n = 0; n < batch; ++n) {
        const float* xc = x + (n * nOutput_ + c) * positions;
        for (int64_t p = 0; p < positions; ++p) {
          const double d = static_cast<double>(xc[p]) - mean;
          sumSquares += d * d;
        }
      }
      invstd = math::batchNormInvstd(math::batchNormAverage(sumSquares, m), eps_);
      saveMean_.data()[c] = mean;
      saveInvstd_.data()[c] = invstd;
      runMean[c] = math::batchNormRunningMean(runMean[c], mean, momentum_);
      runVar[c] = math::batchNormRunningVar(runVar[c], sumSquares, m, momentum_);
    } else {
      mean = runMean[c];
      invstd = math::batchNormInvstd(runVar[c], eps_);
    }
    const float w = affine_ ? weight.data()[c] : 1.f;
    const float b = affine_ ? bias.data()[c] : 0.f;
    for (int64_t n = 0; n < batch; ++n) {
      const int64_t base = (n * nOutput_ + c) * positions;
      for (int64_t p = 0; p < positions; ++p) y[base + p] = math::batchNormOutput(x[base + p], mean, invstd, w, b);
    }
  }
  return output;
}

void BatchNormalization::clearState() {
  saveMean_.set_(Tensor());
  saveInvstd_.set_(Tensor());
  Module::clearState();
}

void BatchNormalization::statistics(int64_t c, float& mean, float& invstd) const {
  if (train_) {
    mean = saveMean_.data()[c];
    invstd = saveInvstd_.data()[c];
  } else {
    mean = runningMean.data()[c];
    invstd = math::batchNormInvstd(runningVar.data()[c], eps_);
  }
}

void BatchNormalization::gradientSums(const float* x, const float* g, int64_t batch, int64_t positions, int64_t c,
                                      float mean, double& dotp, double& gsum) const {
  dotp = 0;
  gsum = 0;
  for (int64_t n = 0; n < batch; ++n) {
    const int64_t base = (n * nOutput_ + c) * positions;
    for (int64_t p = 0; p < positions; ++p) {
      gsum += g[base + p];
      dotp += (static_cast<double>(x[base + p]) - mean) * g[base + p];
    }
  }
}

const Tensor& BatchNormalization::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  checkInput(input);
  checkGradOutput(input, gradOutput);
  const int64_t batch = input.size(0);
  const int64_t positions = this->positions(input);
  const int64_t m = batch * positions;
  const Tensor contiguousInput = input.contiguous();
  const Tensor contiguousGradOutput = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  const float* x = contiguousInput.data();
  const float* g = contiguousGradOutput.data();
  float* gi = gradInput.data();
  for (int64_t c = 0; c < nOutput_; ++c) {
    float mean, invstd;
    statistics(c, mean, invstd);
    const float w = affine_ ? weight.data()[c] : 1.f;
    if (train_) {
      double dotp, gsum;
      gradientSums(x, g, batch, positions, c, mean, dotp, gsum);
      const float gradMean = math::batchNormAverage(gsum, m);
      const float projection = math::batchNormProjection(dotp, invstd, m);
      for (int64_t n = 0; n < batch; ++n) {
        const int64_t base = (n * nOutput_ + c) * positions;
        for (int64_t p = 0; p < positions; ++p)
          gi[base + p] =
              math::batchNormGradInputTraining(g[base + p], x[base + p], mean, invstd, w, gradMean, projection);
      }
    } else {
      for (int64_t n = 0; n < batch; ++n) {
        const int64_t base = (n * nOutput_ + c) * positions;
        for (int64_t p = 0; p < positions; ++p) gi[base + p] = math::batchNormGradInputEvaluate(g[base + p], invstd, w);
      }
    }
  }
  return gradInput;
}

void BatchNormalization::accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) {
  if (!affine_) return;
  checkInput(input);
  checkGradOutput(input, gradOutput);
  const int64_t batch = input.size(0);
  const int64_t positions = this->positions(input);
  const Tensor contiguousInput = input.contiguous();
  const Tensor contiguousGradOutput = gradOutput.contiguous();
  const float* x = contiguousInput.data();
  const float* g = contiguousGradOutput.data();
  for (int64_t c = 0; c < nOutput_; ++c) {
    float mean, invstd;
    statistics(c, mean, invstd);
    double dotp, gsum;
    gradientSums(x, g, batch, positions, c, mean, dotp, gsum);
    gradWeight.data()[c] += math::batchNormGradWeight(dotp, invstd, scale);
    gradBias.data()[c] += math::batchNormGradBias(gsum, scale);
  }
}

}  // namespace nn
