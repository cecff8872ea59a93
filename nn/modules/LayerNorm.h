// nn::LayerNorm: PyTorch's layer normalisation. Each sample's values over the last dimensions
// (the normalised shape) are normalised by their own mean and biased variance, then scaled and
// shifted per element; there are no running statistics, so training and evaluation agree.
#pragma once

#include <utility>
#include <vector>

#include "nn/core/Options.h"
#include "nn/modules/RowNormalization.h"

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
class LayerNorm : public WithOptions<LayerNormOptions, RowNormalization> {
 public:
  /// LayerNorm({64}) as PyTorch's nn.LayerNorm(64); the other arguments are those of LayerNormOptions.
  explicit LayerNorm(std::vector<int64_t> normalizedShape, float eps = 1e-5f, bool elementwiseAffine = true)
      : LayerNorm(Options{std::move(normalizedShape), eps, elementwiseAffine}) {}
  /// The module of `options`, weight one and bias zero; an nn::Error unless normalizedShape has
  /// positive sizes (at least one) and eps is at least 0.
  explicit LayerNorm(const Options& options);

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

  // weight and bias (RowNormalization) have normalizedShape: a scale and a shift per element.

 protected:
  void checkInput(const Tensor& input) const override;
  /// One row per sample, of the normalised elements, each its own parameter.
  NormalizationShape shapeOf(const Tensor& input) const override;
  float epsilon() const override { return options_.eps; }

 private:
  int64_t elements_ = 1;  // the product of normalizedShape: one row's values
};

}  // namespace nn
