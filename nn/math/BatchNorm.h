// Batch normalisation formulas (Torch7's THNN BatchNormalization), shared by the CPU loops
// and the CUDA kernels. Per channel, over the m = batch * height * width values x of it:
//   training:  y = (x - mean) * invstd * weight + bias, mean and biased variance of the batch
//   evaluate:  the same with the running mean and running variance
// Without affine parameters weight is 1 and bias 0.
#pragma once

#include <cmath>
#include <cstdint>

#include "nn/math/Activation.h"
#include "nn/math/HostDevice.h"

namespace nn::math {

/// sum / m: the batch mean (sum of x), the biased variance (sum of (x - mean)^2), the mean of g.
NN_HD inline float batchNormAverage(double sum, int64_t m) { return static_cast<float>(sum / static_cast<double>(m)); }

/// 1 / sqrt(variance + eps).
NN_HD inline float batchNormInvstd(float variance, float eps) { return 1.f / sqrtf(variance + eps); }

/// y = (x - mean) * invstd * weight + bias: the output of one value.
NN_HD inline float batchNormOutput(float x, float mean, float invstd, float weight, float bias) {
  return (x - mean) * invstd * weight + bias;
}

/// running_mean <- (1 - momentum) * running_mean + momentum * mean.
NN_HD inline float batchNormRunningMean(float running, float mean, float momentum) {
  return (1.f - momentum) * running + momentum * mean;
}

/// running_var <- (1 - momentum) * running_var + momentum * unbiased variance, where the
/// unbiased variance of m > 1 values is sumSquares / (m - 1) (Torch7 and PyTorch); sumSquares
/// is the sum of (x - mean)^2 over the channel.
NN_HD inline float batchNormRunningVar(float running, double sumSquares, int64_t m, float momentum) {
  return (1.f - momentum) * running + momentum * static_cast<float>(sumSquares / static_cast<double>(m - 1));
}

// Backward. With g = gradOutput, per channel:
//   dotp = sum (x - mean) * g,   gsum = sum g
//   training:  gradInput = (g - gsum / m - (x - mean) * dotp * invstd^2 / m) * invstd * weight
//              (the mean and the variance depend on x, hence the two correction terms)
//   evaluate:  gradInput = g * invstd * weight
//   gradWeight += scale * dotp * invstd,   gradBias += scale * gsum

/// The terms of the per-feature sums, in the precision T a backend adds them in (the CPU float
/// lanes, CUDA double): (x - mean)^2 for the variance, (x - mean) * g for dotp.
template <typename T>
NN_HD inline T batchNormSquaredDeviation(T x, T mean) {
  const T d = x - mean;
  return d * d;
}
/// (x - mean) * g: a term of dotp.
template <typename T>
NN_HD inline T batchNormDotTerm(T x, T mean, T g) {
  return (x - mean) * g;
}

/// The sums a training updateGradInput saves for accGradParameters (BatchNormState::gradSums,
/// [2, features]): dotp and gsum of feature c, each rounded to float, which is all that
/// batchNormGradWeight and batchNormGradBias use of them.
NN_HD inline void batchNormSaveGradSums(float* sums, int64_t features, int64_t c, double dotp, double gsum) {
  sums[c] = static_cast<float>(dotp);
  sums[features + c] = static_cast<float>(gsum);
}
/// Feature c's dotp and gsum as batchNormSaveGradSums stored them.
NN_HD inline void batchNormLoadGradSums(const float* sums, int64_t features, int64_t c, double* dotp, double* gsum) {
  *dotp = sums[c];
  *gsum = sums[features + c];
}

/// dotp * invstd^2 / m, the factor of (x - mean) in the training-mode gradInput.
NN_HD inline float batchNormProjection(double dotp, float invstd, int64_t m) {
  return static_cast<float>(dotp / static_cast<double>(m)) * invstd * invstd;
}

/// Training-mode gradInput of one value: (g - gradMean - (x - mean) * projection) * invstd * weight, with
/// gradMean = gsum / m and projection from batchNormProjection.
NN_HD inline float batchNormGradInputTraining(float g, float x, float mean, float invstd, float weight, float gradMean,
                                              float projection) {
  return (g - gradMean - (x - mean) * projection) * invstd * weight;
}

/// Evaluation-mode gradInput of one value: g * invstd * weight (the running statistics do not depend on x).
NN_HD inline float batchNormGradInputEvaluate(float g, float invstd, float weight) { return g * invstd * weight; }

/// What accGradParameters adds to a feature's gradWeight: scale * dotp * invstd.
NN_HD inline float batchNormGradWeight(double dotp, float invstd, float scale) {
  return scale * static_cast<float>(dotp) * invstd;
}

/// What accGradParameters adds to a feature's gradBias: scale * gsum.
NN_HD inline float batchNormGradBias(double gsum, float scale) { return scale * static_cast<float>(gsum); }

// Note [Batch normalisation, then ReLU]
// A batch normalisation followed by an in-place ReLU runs as one module where a Sequential holds
// the two (BatchNormState::rectified): the forward writes ReLU(y) in the pass that writes y, and
// the backward takes the ReLU's gradOutput g and uses, wherever it would use g, the ReLU's
// gradInput: g where y > 0, else 0, with y computed again from x by batchNormOutput from the
// statistics and parameters the forward used (the same floats, so the same positions pass).
// ReLU's own formula (math::activation::ReLU) serves both, so the outputs and gradients are
// those of the two modules one after the other, and a step saves the ReLU's passes over memory:
// two forward and three backward.

/// The output: y, or where a ReLU follows, ReLU(y).
NN_HD inline float batchNormRectified(float y, bool rectified) {
  return rectified ? activation::ReLU(ActivationArgs{}).forward(y) : y;
}

/// The gradient at y of the ReLU's gradOutput g: the ReLU's gradInput.
NN_HD inline float batchNormUnrectify(float g, float y) { return activation::ReLU(ActivationArgs{}).backward(y, y, g); }

/// The gradient at y of one feature from the gradOutput g at x: g itself, or where a ReLU
/// follows, the ReLU's gradInput.
struct BatchNormGradientAtY {
  /// A ReLU follows (BatchNormState::rectified).
  bool rectified;
  /// The feature's mean as the backward uses it (batchNormStatistics).
  float mean;
  /// The feature's 1 / sqrt(variance + eps) as the backward uses it.
  float invstd;
  /// The feature's weight; 1 without affine parameters.
  float weight;
  /// The feature's bias; 0 without affine parameters.
  float bias;

  /// The gradient at y of the value x, given the gradOutput g there.
  NN_HD float operator()(float x, float g) const { return rectified ? rectifiedGradient(x, g) : g; }
  /// The ReLU's gradInput, whatever `rectified` says.
  NN_HD float rectifiedGradient(float x, float g) const {
    return batchNormUnrectify(g, batchNormOutput(x, mean, invstd, weight, bias));
  }
};

/// Feature c's, from the statistics the backward uses and the parameters (null: 1 and 0).
NN_HD inline BatchNormGradientAtY batchNormGradientAtY(bool rectified, const float* weight, const float* bias,
                                                       int64_t c, float mean, float invstd) {
  return {rectified, mean, invstd, weight ? weight[c] : 1.f, bias ? bias[c] : 0.f};
}

/// The mean and invstd of feature c as the backward pass uses them: the saved batch statistics
/// in training mode, the running ones in evaluation mode (the saved pointers may then be null).
NN_HD inline void batchNormStatistics(bool train, const float* saveMean, const float* saveInvstd,
                                      const float* runningMean, const float* runningVar, float eps, int64_t c,
                                      float* mean, float* invstd) {
  if (train) {
    *mean = saveMean[c];
    *invstd = saveInvstd[c];
  } else {
    *mean = runningMean[c];
    *invstd = batchNormInvstd(runningVar[c], eps);
  }
}

}  // namespace nn::math
