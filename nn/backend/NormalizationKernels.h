// NormalizationKernels: the work of nn::LayerNorm and nn::GroupNorm on one device type, over a
// contiguous input seen as rows normalised each by its own statistics, with affine parameters
// that vary within a row. CPU: nn/cpu, CUDA: nn/cuda (kernels over the same
// nn/math/Normalization.h formulas); see nn/backend/Backend.h.
#pragma once

#include <cstdint>

#include "nn/math/Normalization.h"
#include "nn/tensor/Device.h"

namespace nn {

/// The sizes of one call: a contiguous input of `rows` rows of `groupSize` values, `groups`
/// rows to a sample. LayerNorm: [samples, normalised elements], groups 1, positions 1.
/// GroupNorm of [N, C, *]: [N * G, C / G * positions], groups G, positions the product of *.
struct NormalizationShape {
  /// Rows, each normalised on its own: samples times groups.
  int64_t rows = 0;
  /// Values of one row.
  int64_t groupSize = 0;
  /// Rows per sample: row r is group r % groups of sample r / groups.
  int64_t groups = 1;
  /// Consecutive values of a sample that share one affine parameter; it divides groupSize.
  int64_t positions = 1;

  /// The affine parameters, groups * groupSize / positions: LayerNorm's normalised elements,
  /// GroupNorm's channels.
  NN_HD int64_t parameters() const { return groups * (groupSize / positions); }
};

/// The module's tensors on the input's device and its settings.
struct NormalizationState {
  /// [parameters()]; null without affine parameters (weight 1).
  const float* weight;
  /// [parameters()]; null without affine parameters (bias 0).
  const float* bias;
  /// [rows]: each row's mean, written by updateOutput, read by the backward passes.
  float* saveMean;
  /// [rows]: each row's 1 / sqrt(biased variance + eps), as saveMean.
  float* saveInvstd;
  /// Added to the variance under the square root.
  float eps;
};

/// The layer and group normalisation modules' passes on one device type, over x, y, gradOut and
/// gradIn [rows, groupSize] and the tensors of NormalizationState.
struct NormalizationKernels {
  /// y from each row's statistics, which it saves (the same in training and evaluation: there
  /// are no running statistics).
  void (*updateOutput)(const Device& device, const float* x, float* y, const NormalizationShape& shape,
                       const NormalizationState& state);
  /// gradIn = d loss / dx from gradOut, through the saved statistics, which depend on x.
  void (*updateGradInput)(const Device& device, const float* x, const float* gradOut, float* gradIn,
                          const NormalizationShape& shape, const NormalizationState& state);
  /// Per parameter c: gradWeight[c] += scale * sum gradOut * (x - mean) * invstd and
  /// gradBias[c] += scale * sum gradOut over every value of c, with the saved statistics.
  void (*accGradParameters)(const Device& device, const float* x, const float* gradOut, float* gradWeight,
                            float* gradBias, const NormalizationShape& shape, const NormalizationState& state,
                            float scale);
};

}  // namespace nn
