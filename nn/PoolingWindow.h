// nn::PoolingWindow: the window of a spatial pooling module (kernel, stride, padding, ceil
// mode) and what follows from it alone: the checks of its arguments and of an input, the
// output sizes, the description and the saved settings. SpatialMaxPooling and
// SpatialAveragePooling each hold one; what they do inside the windows is their own.
#pragma once

#include <string>

#include "nn/Config.h"
#include "nn/Module.h"
#include "nn/Tensor.h"
#include "nn/backend/PoolingKernels.h"

namespace nn {

struct PoolingWindow {
  /// kW x kH windows moved by dW, dH over an input padded by padW, padH cells on each side.
  /// Throws, naming `module`, unless kernel and stride are positive and the padding is
  /// non-negative and at most half the kernel (Torch7's check).
  PoolingWindow(const char* module, int64_t kW, int64_t kH, int64_t dW, int64_t dH, int64_t padW, int64_t padH);
  /// The window of a saved config (keys as config() writes them).
  PoolingWindow(const char* module, const Config& config);

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
  /// kW, kH, dW, dH, padW, padH and ceilMode into `config`.
  Config& addTo(Config& config) const;

  int64_t kW, kH, dW, dH, padW, padH;
  /// Output sizes rounded up (Torch7's :ceil()) rather than down.
  bool ceilMode = false;
};

}  // namespace nn
