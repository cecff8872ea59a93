// nn::SpatialBatchNormalization: batch normalisation of an input [batch, planes, height, width],
// each plane's statistics taken over the batch and all positions. The work is BatchNormalization's.
#pragma once

#include "nn/modules/BatchNormalization.h"

namespace nn {

/// Torch7's nn.SpatialBatchNormalization (PyTorch's BatchNorm2d), for [batch, nOutput, height, width].
class SpatialBatchNormalization : public BatchNormalization {
 public:
  /// nOutput planes; the other arguments as for BatchNormalization.
  explicit SpatialBatchNormalization(int64_t nOutput, float eps = 1e-5f, float momentum = 0.1f, bool affine = true)
      : SpatialBatchNormalization(Options{nOutput, eps, momentum, affine}) {}
  /// The same from options (what nn::load rebuilds from); an nn::Error unless nOutput is positive and eps
  /// at least 0.
  explicit SpatialBatchNormalization(const Options& options)
      : BatchNormalization("nn.SpatialBatchNormalization", options, 4) {}
};

}  // namespace nn
