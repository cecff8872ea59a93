// Layer and group normalisation formulas (PyTorch's LayerNorm and GroupNorm), shared by the CPU
// loops and the CUDA kernels. Each row (a sample's trailing values for LayerNorm, a sample's
// group of channels for GroupNorm) is normalised by its own statistics, over its m values x:
//   y = (x - mean) * invstd * weight[c] + bias[c],   invstd = 1 / sqrt(biased variance + eps)
// where c, the value's parameter, varies within the row (an element of LayerNorm's
// normalised shape, a channel of GroupNorm's). Without affine parameters weight is 1 and bias 0.
// The statistics are batch normalisation's formulas over a row instead of a feature
// (nn/math/BatchNorm.h): batchNormAverage, batchNormSquaredDeviation, batchNormInvstd and
// batchNormOutput serve both.
#pragma once

#include <cstdint>

#include "nn/math/BatchNorm.h"
#include "nn/math/HostDevice.h"

namespace nn::math {

/// The parameter of value i of row `row`: rows come `groups` to a sample, each of `groupSize`
/// values, and `positions` consecutive values of a sample share one parameter (GroupNorm: a
/// channel's positions; LayerNorm: 1, one parameter per value, and one group).
NN_HD inline int64_t normalizationParameter(int64_t row, int64_t i, int64_t groups, int64_t groupSize,
                                            int64_t positions) {
  return ((row % groups) * groupSize + i) / positions;
}

// Backward. With g = gradOutput and gy = g * weight[c] (the gradient at the normalised value),
// per row of m values:
//   dotp = sum (x - mean) * gy,   gsum = sum gy
//   gradInput = (gy - gsum / m - (x - mean) * dotp * invstd^2 / m) * invstd
// which is batch normalisation's training gradInput (batchNormProjection,
// batchNormGradInputTraining) with the weight taken into gy, since it varies within a row.
// Per parameter c, over every value of it in every row:
//   gradWeight[c] += scale * sum g * (x - mean) * invstd,   gradBias[c] += scale * sum g

/// gy = g * weight: the gradient at the normalised value of one value; weight 1 without affine
/// parameters.
NN_HD inline float normalizationScaledGradient(float g, float weight) { return g * weight; }

/// gradInput of one value, from gy (normalizationScaledGradient), the row's gradMean = gsum / m
/// and projection = dotp * invstd^2 / m (batchNormProjection).
NN_HD inline float normalizationGradInput(float gy, float x, float mean, float invstd, float gradMean,
                                          float projection) {
  return batchNormGradInputTraining(gy, x, mean, invstd, 1.f, gradMean, projection);
}

/// A term of gradWeight's sum, in the precision T a backend adds them in: g times the normalised
/// value (x - mean) * invstd, which is computed in float as the forward computes it.
template <typename T>
NN_HD inline T normalizationWeightTerm(float x, float mean, float invstd, float g) {
  return static_cast<T>(g) * static_cast<T>(batchNormOutput(x, mean, invstd, 1.f, 0.f));
}

/// What accGradParameters adds to a parameter's gradWeight or gradBias: scale times its sum,
/// rounded to float.
NN_HD inline float normalizationParameterGradient(double sum, float scale) { return scale * static_cast<float>(sum); }

}  // namespace nn::math
