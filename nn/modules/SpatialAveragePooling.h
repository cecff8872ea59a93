// nn::SpatialAveragePooling: the mean of each kW x kH window of every plane of
// [N, C, H, W] or [C, H, W] input.
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/PoolingWindow.h"

namespace nn {

/// The constructor arguments of nn::SpatialAveragePooling, and the ceil and count-pad settings.
struct SpatialAveragePoolingOptions {
  /// Kernel, stride (1 by default, as Torch7's), padding and ceil mode; its fields are saved as this
  /// struct's own (kW, kH, ...).
  PoolingWindow window;
  /// The divisor counts the padding cells too (Torch7's default).
  bool countIncludePad = true;

  template <typename F>
  void visit(F&& field) {
    field("window", window);
    field("countIncludePad", countIncludePad);
  }
};

/// Torch7's nn.SpatialAveragePooling (PyTorch's AvgPool2d): the mean of each window of every plane.
class SpatialAveragePooling : public WithOptions<SpatialAveragePoolingOptions> {
 public:
  /// kW x kH windows moved by dW, dH over an input zero-padded by padW, padH cells on each
  /// side; the padding must be at most half the kernel (Torch7's check).
  SpatialAveragePooling(int64_t kW, int64_t kH, int64_t dW = 1, int64_t dH = 1, int64_t padW = 0, int64_t padH = 0);
  /// The same from options (what nn::load rebuilds from); throws where the window is invalid.
  explicit SpatialAveragePooling(const Options& options);

  /// Output sizes rounded up, so that windows may hang over the bottom and right edges
  /// (Torch7's :ceil()). Returns this module.
  SpatialAveragePooling& ceil();
  /// Output sizes rounded down, the default (Torch7's :floor()). Returns this module.
  SpatialAveragePooling& floor();
  /// Whether output sizes are rounded up (ceil()) rather than down.
  bool ceilMode() const { return options_.window.ceilMode; }
  /// Divide by the number of input cells in the window instead of counting the padding too
  /// (Torch7's :setCountExcludePad()). Returns this module.
  SpatialAveragePooling& setCountExcludePad();
  /// Count the padding cells in the divisor, the default (Torch7's :setCountIncludePad()).
  SpatialAveragePooling& setCountIncludePad();
  /// Whether the divisor counts the padding cells (the default) or only the input cells in the window.
  bool countIncludePad() const { return options_.countIncludePad; }

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;

  std::string typeName() const override { return "nn.SpatialAveragePooling"; }
  /// "nn.SpatialAveragePooling(2x2, 2,2)", then ", padW,padH" if padded.
  std::string toString() const override;
};

}  // namespace nn
