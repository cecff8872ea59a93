// nn::SpatialAdaptiveAveragePooling: every plane of [N, C, H, W] or [C, H, W] input pooled to
// oH x oW cells, output cell (y, x) the mean of the input rows [floor(y H / oH),
// ceil((y + 1) H / oH)) and columns likewise (Torch7's SpatialAdaptiveAveragePooling(W, H),
// PyTorch's adaptive_avg_pool2d); windows overlap where the sizes do not divide. The window
// math is nn/math/Pooling.h.
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/PlaneResampling.h"

namespace nn {

/// The constructor arguments of nn::SpatialAdaptiveAveragePooling.
struct SpatialAdaptiveAveragePoolingOptions {
  /// Output width in cells (Torch7's `W`), 1 by default; positive.
  int64_t oW = 1;
  /// Output height in cells (Torch7's `H`), 1 by default; positive.
  int64_t oH = 1;

  template <typename F>
  void visit(F&& field) {
    field("oW", oW);
    field("oH", oH);
  }
};

/// Average pooling to a fixed output size, whatever the input's (Torch7's nn.SpatialAdaptiveAveragePooling).
class SpatialAdaptiveAveragePooling : public WithOptions<SpatialAdaptiveAveragePoolingOptions, PlaneResampling> {
 public:
  /// Width first, as Torch7's. Planes smaller than oH x oW repeat cells.
  SpatialAdaptiveAveragePooling(int64_t oW, int64_t oH) : SpatialAdaptiveAveragePooling(Options{oW, oH}) {}
  /// The same from options (what nn::load rebuilds from); throws unless oW and oH are positive.
  explicit SpatialAdaptiveAveragePooling(const Options& options);

  std::string typeName() const override { return "nn.SpatialAdaptiveAveragePooling"; }

 protected:
  std::pair<int64_t, int64_t> outputSize(const Tensor& input, int64_t height, int64_t width) const override;
};

}  // namespace nn
