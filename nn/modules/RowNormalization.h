// nn::RowNormalization: what LayerNorm and GroupNorm share. Both see their input as rows, each
// normalised by its own mean and biased variance (saved for the backward), then scaled and
// shifted by parameters that the kernels index by position (NormalizationKernels); they differ in
// how an input is cut into rows and which parameter each value takes (shapeOf), and in their
// checks of the input.
#pragma once

#include <vector>

#include "nn/backend/NormalizationKernels.h"
#include "nn/core/Module.h"

namespace nn {

/// The passes of a normalisation of rows (see the top of this file); a subclass says how its
/// input is cut into rows.
class RowNormalization : public Module {
 public:
  /// Normalises each row by its mean and biased variance, which it saves for the backward.
  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;

  /// Also releases the saved statistics.
  void clearState() override;

  /// PyTorch's reset_parameters: weight one, bias zero.
  void reset();

  /// Parameter "weight": the scale per element (LayerNorm) or channel (GroupNorm); empty without
  /// affine parameters.
  Tensor weight;
  /// Parameter "bias": the shift, as weight.
  Tensor bias;
  /// Gradient of the loss with respect to weight, summed over the samples (and positions);
  /// zeroed by zeroGradParameters; empty without affine parameters.
  Tensor gradWeight;
  /// Gradient of the loss with respect to bias, as gradWeight.
  Tensor gradBias;

 protected:
  /// Where `affine`, weight (ones) and bias (zeros) of `shape`, registered as "weight" and "bias".
  void makeParameters(bool affine, const std::vector<int64_t>& shape);
  /// Throws an nn::Error naming the module unless `input` is one it normalises.
  virtual void checkInput(const Tensor& input) const = 0;
  /// The input as the kernels see it.
  virtual NormalizationShape shapeOf(const Tensor& input) const = 0;
  /// The number added to the variance.
  virtual float epsilon() const = 0;

 private:
  void checkGradOutput(const Tensor& input, const Tensor& gradOutput) const;
  NormalizationState state();

  bool affine_ = false;
  // Each row's mean and 1 / sqrt(biased variance + eps) of the last forward.
  Tensor saveMean_, saveInvstd_;
};

}  // namespace nn
