// nn::SpatialDropout: dropout of whole planes (Torch7's SpatialDropout, PyTorch's Dropout2d).
// In training, each plane of [N, C, H, W] or [C, H, W] input is zeroed with probability p and
// otherwise scaled by 1 / (1 - p); in evaluation, output = input. Torch7's SpatialDropout
// scaled by 1 - p in evaluation instead (its v1 dropout); this keeps nn::Dropout's v2 rule,
// with the same expected outputs.
#pragma once

#include "nn/modules/Dropout.h"

namespace nn {

/// Torch7's nn.SpatialDropout (PyTorch's Dropout2d): each plane dropped whole, with probability p.
class SpatialDropout : public Dropout {
 public:
  /// Planes zeroed with probability `p`, in [0, 1).
  explicit SpatialDropout(float p = 0.5f) : SpatialDropout(Options{p}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit SpatialDropout(const Options& options) : Dropout(options, "nn.SpatialDropout") {}

  std::string typeName() const override { return "nn.SpatialDropout"; }

 protected:
  void checkInput(const Tensor& input) const override;
  /// One draw per plane, the plane filled with it.
  void drawMask(const Tensor& input, float* mask) override;
};

}  // namespace nn
