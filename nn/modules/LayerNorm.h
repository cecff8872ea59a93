// nn::LayerNorm: PyTorch's layer normalisation. Each sample's values over the last dimensions
// (the normalised shape) are normalised by their own mean and biased variance, then scaled and
// shifted per element; there are no running statistics, so training and evaluation agree.
#pragma once

#include <utility>
#include <vector>

#include "nn/backend/NormalizationKernels.h"
#include "nn/core/Options.h"

namespace nn {

/// The arguments of LayerNorm, as PyTorch's nn.LayerNorm names them.
struct LayerNormOptions {
  /// The sizes of the input's last dimensions, which one sample's statistics are taken over; at
  /// least one, each positive. Also the shape of weight and bias.
  std::vector<int64_t> normalizedShape;
  /// Added to the variance before its inverse square root; at least 0. Default 1e-5.
  float eps = 1e-5f;
  /// Learns a weight and a bias per element of normalizedShape (y = normalised x * weight +
  /// bias); without them the output is the normalised input. Default true.
  bool elementwiseAffine = true;

  template <typename F>
  void visit(F&& field) {
    field("normalizedShape", normalizedShape);
    field("eps", eps);
    field("elementwiseAffine", elementwiseAffine);
  }
};

/// PyTorch's nn.LayerNorm, for an input [..., normalizedShape...].
class LayerNorm : public WithOptions<LayerNormOptions> {
 public:
  /// LayerNorm({64}) as PyTorch's nn.LayerNorm(64); the other arguments are those of LayerNormOptions.
  explicit LayerNorm(std::vector<int64_t> normalizedShape, float eps = 1e-5f, bool elementwiseAffine = true)
      : LayerNorm(Options{std::move(normalizedShape), eps, elementwiseAffine}) {}
  /// The module of `options`, weight one and bias zero; an nn::Error unless normalizedShape has
  /// positive sizes (at least one) and eps is at least 0.
  explicit LayerNorm(const Options& options);

  /// PyTorch's reset_parameters: weight one, bias zero.
  void reset();

  /// Normalises each sample's last normalizedShape().size() dimensions by their mean and
  /// biased variance, which it saves for the backward.
  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;

  /// Also releases the saved statistics.
  void clearState() override;

  std::string typeName() const override { return "nn.LayerNorm"; }
  /// "nn.LayerNorm([64])", with ", eps=..." and ", elementwiseAffine=false" where they differ
  /// from the defaults.
  std::string toString() const override;

  /// The sizes of the normalised dimensions (LayerNormOptions::normalizedShape).
  const std::vector<int64_t>& normalizedShape() const { return options_.normalizedShape; }
  /// The number added to the variance (LayerNormOptions::eps).
  float eps() const { return options_.eps; }
  /// Whether the module has a weight and a bias (LayerNormOptions::elementwiseAffine).
  bool elementwiseAffine() const { return options_.elementwiseAffine; }

  /// Parameter "weight", of normalizedShape: the scale per element; empty without elementwiseAffine.
  Tensor weight;
  /// Parameter "bias", of normalizedShape: the shift per element; empty without elementwiseAffine.
  Tensor bias;
  /// Gradient of the loss with respect to weight, summed over the samples; zeroed by
  /// zeroGradParameters; empty without elementwiseAffine.
  Tensor gradWeight;
  /// Gradient of the loss with respect to bias, as gradWeight.
  Tensor gradBias;

 private:
  void checkInput(const Tensor& input) const;
  void checkGradOutput(const Tensor& input, const Tensor& gradOutput) const;
  /// The input as the kernels see it: one row per sample, of the normalised elements.
  NormalizationShape shapeOf(const Tensor& input) const;
  NormalizationState state();

  int64_t elements_ = 1;  // the product of normalizedShape: one row's values
  // Each row's mean and 1 / sqrt(biased variance + eps) of the last forward.
  Tensor saveMean_, saveInvstd_;
};

}  // namespace nn
