// nn::SpatialMaxPooling: the maximum of each kW x kH window of every plane of
// [N, C, H, W] or [C, H, W] input.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/core/Options.h"
#include "nn/modules/PoolingWindow.h"

namespace nn {

/// Torch7's nn.SpatialMaxPooling (PyTorch's MaxPool2d): the maximum of each window of every plane.
class SpatialMaxPooling : public WithOptions<PoolingWindow> {
 public:
  /// kW x kH windows moved by dW, dH (0 means by the kernel size, Torch7's default), over an
  /// input padded by padW, padH cells on each side that never win; the padding must be at
  /// most half the kernel (Torch7's check).
  SpatialMaxPooling(int64_t kW, int64_t kH, int64_t dW = 0, int64_t dH = 0, int64_t padW = 0, int64_t padH = 0);
  /// The window as options (its stride as given, not 0).
  explicit SpatialMaxPooling(const PoolingWindow& window);

  /// Output sizes rounded up, so that windows may hang over the bottom and right edges
  /// (Torch7's :ceil()). Returns this module.
  SpatialMaxPooling& ceil();
  /// Output sizes rounded down, the default (Torch7's :floor()). Returns this module.
  SpatialMaxPooling& floor();
  /// Whether output sizes are rounded up (ceil()) rather than down.
  bool ceilMode() const { return options_.ceilMode; }

  const Tensor& updateOutput(const Tensor& input) override;
  /// Routes each gradOutput element to the input cell that won its window in the last
  /// forward, so the input must be the one of the last forward (Torch7's contract).
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void clearState() override;

  std::string typeName() const override { return "nn.SpatialMaxPooling"; }
  /// "nn.SpatialMaxPooling(2x2, 2,2)", then ", padW,padH" if padded.
  std::string toString() const override;

  /// Shaped like output: for each output, the flat index (y * width + x) within its input
  /// plane of the cell it took, counted from 0; the first of equal maxima wins.
  Tensor indices;

 private:
  PoolingShape checkInput(const Tensor& input) const;

  // The sizes of the last forward's input ({} before one, and after clearState): backward
  // refuses another shape on every device. (The CPU also finds indices of another input of the
  // same shape, by their winners; on a GPU that check would wait for the device.)
  std::vector<int64_t> forwardSizes_;
};

}  // namespace nn
