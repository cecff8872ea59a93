// nn::SpatialUpSamplingNearest: every plane of [N, C, H, W] or [C, H, W] input enlarged by an
// integer scale, each cell copied to a scale x scale block (Torch7's
// SpatialUpSamplingNearest(scale), PyTorch's interpolate(mode='nearest', scale_factor=scale));
// the gradient of a cell is the sum of its block's (nn/math/Pooling.h).
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/PlaneResampling.h"

namespace nn {

/// The constructor arguments of nn::SpatialUpSamplingNearest.
struct SpatialUpSamplingNearestOptions {
  /// The factor of both height and width, from 1 to 65536; 2 by default.
  int64_t scale = 2;

  template <typename F>
  void visit(F&& field) {
    field("scale", scale);
  }
};

/// Torch7's nn.SpatialUpSamplingNearest: nearest-neighbour enlargement of every plane by an integer factor.
class SpatialUpSamplingNearest : public WithOptions<SpatialUpSamplingNearestOptions, PlaneResampling> {
 public:
  /// Planes enlarged `scale` times in height and width, as Torch7's nn.SpatialUpSamplingNearest(scale);
  /// throws unless it is from 1 to 65536.
  explicit SpatialUpSamplingNearest(int64_t scale) : SpatialUpSamplingNearest(Options{scale}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit SpatialUpSamplingNearest(const Options& options);

  std::string typeName() const override { return "nn.SpatialUpSamplingNearest"; }

 protected:
  std::pair<int64_t, int64_t> outputSize(const Tensor& input, int64_t height, int64_t width) const override;
};

}  // namespace nn
