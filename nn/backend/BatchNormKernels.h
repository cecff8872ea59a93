// BatchNormKernels: the work of nn::BatchNormalization and nn::SpatialBatchNormalization on
// one device type, over a contiguous input seen as [batch, features, positions] (positions = 1
// for a 2-D input). CPU: nn/cpu, CUDA: nn/cuda (kernels over the same nn/math/BatchNorm.h
// formulas); see nn/backend/Backend.h.
#pragma once

#include <cstdint>

#include "nn/math/BatchNorm.h"
#include "nn/math/HostDevice.h"
#include "nn/tensor/Device.h"

namespace nn {

/// The sizes of one call: a contiguous input seen as [batch, features, positions].
struct BatchNormShape {
  /// Samples: the input's first size.
  int64_t batch = 0;
  /// Features (channels), each normalised on its own.
  int64_t features = 0;
  /// Values of one feature per sample: height * width of a 4-D input, 1 of a 2-D one.
  int64_t positions = 0;
};

/// What a training pass does: all of it, or one part, where the statistics are of a batch that
/// several devices or processes hold slices of (synchronised batch normalisation): the module
/// sums each part's per-feature sums over them between the parts.
enum class BatchNormPhase {
  /// The whole pass, with the statistics of this call's batch.
  whole,
  /// updateOutput: statSums[c] = sum x over feature c's values; nothing else is written.
  sumValues,
  /// updateOutput: statSums[c] = sum (x - saveMean[c])^2; nothing else is written.
  sumSquares,
  /// updateGradInput: gradSums = dotp and gsum (about saveMean); gradIn is not written.
  sumGradients,
  /// updateOutput: y from saveMean and saveInvstd as they are (the running statistics are the
  /// caller's to move). updateGradInput: gradIn from the dotp and gsum in gradSums, of `count`
  /// values per feature.
  fromSums,
};

/// The module's per-feature tensors, [features] each on the input's device, and its settings.
struct BatchNormState {
  /// Null without affine parameters (weight 1, bias 0).
  const float* weight;
  /// Null without affine parameters (bias 0).
  const float* bias;
  /// Read in evaluation mode; a training forward moves it towards the batch mean by `momentum`.
  float* runningMean;
  /// Read in evaluation mode; a training forward moves it towards the unbiased batch variance by `momentum`.
  float* runningVar;
  /// The batch mean and 1 / sqrt(biased var + eps) of the last training forward: written by
  /// a training forward, read by a training backward; unused (and may be null) otherwise.
  float* saveMean;
  /// The batch's 1 / sqrt(biased var + eps), as saveMean.
  float* saveInvstd;
  /// Added to the variance under the square root.
  float eps;
  /// The running statistics' rate: running = (1 - momentum) * running + momentum * the batch's.
  float momentum;
  /// Training mode (the batch statistics); else evaluation mode (the running statistics).
  bool train;
  /// [2, features]: per feature, dotp = sum (x - mean) * gradOut and gsum = sum gradOut, each
  /// rounded to float. A training updateGradInput writes them where this is not null; an
  /// accGradParameters where gradSumsValid reads them instead of summing x and gradOut again
  /// (the module sets it for the input and gradOutput of the updateGradInput that wrote them).
  float* gradSums = nullptr;
  /// gradSums holds the sums of this call's x and gradOut, so that accGradParameters reads them.
  bool gradSumsValid = false;
  /// A ReLU follows (Note [Batch normalisation, then ReLU], nn/math/BatchNorm.h): the forward
  /// writes ReLU(y); the backward's gradOutput is the ReLU's, taken back through it where read.
  bool rectified = false;
  /// The part of a training pass to do (BatchNormPhase); evaluation ignores it.
  BatchNormPhase phase = BatchNormPhase::whole;
  /// [features]: where the phases sumValues and sumSquares write.
  float* statSums = nullptr;
  /// The values per feature of the whole batch, for the phase fromSums of updateGradInput.
  int64_t count = 0;
};

/// Feature c's gradient at y from gradOutput (Note [Batch normalisation, then ReLU]), for the
/// statistics the backward uses: what the CPU loops and the CUDA kernels both take.
NN_HD inline math::BatchNormGradientAtY batchNormGradientAtY(const BatchNormState& st, int64_t c, float mean,
                                                             float invstd) {
  return math::batchNormGradientAtY(st.rectified, st.weight, st.bias, c, mean, invstd);
}

/// The batch normalisation modules' passes on one device type, over x, y, gradOut and gradIn
/// [batch, features, positions] and the [features] tensors of BatchNormState.
struct BatchNormKernels {
  /// Training: y from the batch statistics, which it saves and moves the running statistics
  /// towards (the variance unbiased). Evaluation: y from the running statistics.
  void (*updateOutput)(const Device& device, const float* x, float* y, const BatchNormShape& shape,
                       const BatchNormState& state);
  /// gradIn = d loss / dx from gradOut. Training: through the saved batch statistics, which depend on x, and
  /// writes dotp and gsum to state.gradSums where not null. Evaluation: gradOut * invstd * weight, from the
  /// running statistics. Where state.rectified, gradOut is first taken back through the ReLU.
  void (*updateGradInput)(const Device& device, const float* x, const float* gradOut, float* gradIn,
                          const BatchNormShape& shape, const BatchNormState& state);
  /// gradWeight += scale * dotp * invstd and gradBias += scale * gsum, per feature; dotp and
  /// gsum from state.gradSums where state.gradSumsValid, else from x and gradOut.
  void (*accGradParameters)(const Device& device, const float* x, const float* gradOut, float* gradWeight,
                            float* gradBias, const BatchNormShape& shape, const BatchNormState& state, float scale);
};

}  // namespace nn
