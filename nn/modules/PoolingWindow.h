// nn::PoolingWindow: the window of a spatial pooling module (kernel, stride, padding, ceil
// mode), an options struct (nn/core/Options.h), and what follows from it alone: the checks of its
// arguments and of an input, the output sizes and the description. SpatialMaxPooling's
// options are one; SpatialAveragePooling's hold one. What they do inside the windows is their own.
#pragma once

#include <string>

#include "nn/backend/PoolingKernels.h"
#include "nn/core/Module.h"
#include "nn/tensor/Tensor.h"

namespace nn {

/// kW x kH windows moved by dW, dH over an input padded by padW, padH cells on each side.
struct PoolingWindow {
  /// Window width in columns; positive (the 0 default must be replaced).
  int64_t kW = 0;
  /// Window height in rows; positive (the 0 default must be replaced).
  int64_t kH = 0;
  /// Horizontal stride in columns, 1 by default (SpatialMaxPooling's constructor makes 0 mean kW).
  int64_t dW = 1;
  /// Vertical stride in rows, 1 by default (SpatialMaxPooling's constructor makes 0 mean kH).
  int64_t dH = 1;
  /// Columns of padding on the left and on the right, 0 by default; at most kW / 2.
  int64_t padW = 0;
  /// Rows of padding at the top and at the bottom, 0 by default; at most kH / 2.
  int64_t padH = 0;
  /// Output sizes rounded up (Torch7's :ceil()) rather than down.
  bool ceilMode = false;

  template <typename F>
  void visit(F&& field) {
    field("kW", kW);
    field("kH", kH);
    field("dW", dW);
    field("dH", dH);
    field("padW", padW);
    field("padH", padH);
    field("ceilMode", ceilMode);
  }

  /// Throws, naming `module`, unless kernel and stride are positive and the padding is
  /// non-negative and at most half the kernel (Torch7's check), the kernel's cells and the
  /// strides at most kMaxElements.
  void check(const char* module) const;

  /// The shape of a call on `input`, [batch, planes, height, width] or [planes, height,
  /// width]; throws, naming `who` (only then is its description made: a steady step
  /// allocates nothing), unless the input has such sizes and every window
  /// reaches into it.
  PoolingShape shapeOf(const Tensor& input, const Module& who) const;
  /// Resizes `t` to the output sizes for `input` of shape `s`, on the input's device.
  void resizeLikeOutput(Tensor& t, const Tensor& input, const PoolingShape& s) const;
  /// Throws, naming `who`, unless `gradOutput` has the output sizes for `input` and lies on
  /// its device.
  void checkGradOutput(const Tensor& input, const Tensor& gradOutput, const PoolingShape& s, const Module& who) const;

  /// "2x2, 2,2", then ", padW,padH" if padded.
  std::string describe() const;
};

}  // namespace nn
