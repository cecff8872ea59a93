// nn::SpatialZeroPadding: zeros added around each plane of a [C, H, W] or [N, C, H, W] input,
// padLeft and padRight columns, padTop and padBottom rows; a negative count crops instead, as
// in Torch7's nn.SpatialZeroPadding(pad_l, pad_r, pad_t, pad_b) and PyTorch's ZeroPad2d.
// gradInput is gradOutput's part that the input went to.
#pragma once

#include <vector>

#include "nn/core/Module.h"
#include "nn/core/Options.h"

namespace nn {

/// The constructor arguments of nn::SpatialZeroPadding; a negative count crops instead of padding.
struct SpatialZeroPaddingOptions {
  /// Zero columns added on the left (Torch7's pad_l), 0 by default.
  int64_t padLeft = 0;
  /// Zero columns added on the right (Torch7's pad_r), 0 by default.
  int64_t padRight = 0;
  /// Zero rows added at the top (Torch7's pad_t), 0 by default.
  int64_t padTop = 0;
  /// Zero rows added at the bottom (Torch7's pad_b), 0 by default.
  int64_t padBottom = 0;

  template <typename F>
  void visit(F&& field) {
    field("padLeft", padLeft);
    field("padRight", padRight);
    field("padTop", padTop);
    field("padBottom", padBottom);
  }
};

/// Torch7's nn.SpatialZeroPadding (PyTorch's ZeroPad2d): zeros around each plane, or a crop.
class SpatialZeroPadding : public WithOptions<SpatialZeroPaddingOptions> {
 public:
  /// As Torch7: the counts not given are padLeft.
  explicit SpatialZeroPadding(int64_t padLeft) : SpatialZeroPadding(padLeft, padLeft, padLeft, padLeft) {}
  /// Columns added on the left and right, rows at the top and bottom (negative: removed), as Torch7's
  /// nn.SpatialZeroPadding(pad_l, pad_r, pad_t, pad_b).
  SpatialZeroPadding(int64_t padLeft, int64_t padRight, int64_t padTop, int64_t padBottom)
      : SpatialZeroPadding(Options{padLeft, padRight, padTop, padBottom}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit SpatialZeroPadding(const Options& options);

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  std::string typeName() const override { return "nn.SpatialZeroPadding"; }
  /// "nn.SpatialZeroPadding(l=1, r=1, t=2, b=0)", as Torch7 prints it.
  std::string toString() const override;
  void clearState() override;

 private:
  // For an input: the output's sizes, and the rows and columns that go from the input to the
  // output (sizes_ of the part, and where it starts on each side).
  void plan(const Tensor& input);
  // Points `inputPart_` and `outputPart_` at the part in tensors of the input's and output's
  // sizes, contiguous, on the same device.
  void pointParts(const Tensor& inputSized, const Tensor& outputSized);

  std::vector<int64_t> outputSizes_;
  std::vector<int64_t> partSizes_;
  int64_t inputStart_ = 0, outputStart_ = 0;  // element offsets of the part's first element
  bool empty_ = false;                        // nothing of the input stays
  Tensor contiguousInput_;
  Tensor contiguousGradOutput_;
  Tensor inputPart_;
  Tensor outputPart_;
};

}  // namespace nn
