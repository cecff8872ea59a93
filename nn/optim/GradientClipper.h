// nn::GradientClipper: PyTorch's torch.nn.utils.clip_grad_norm_ and clip_grad_value_ over a
// module's flat gradient buffer (Module::getParameters().second, Optimizer::gradients()). The
// norm is the whole buffer's, so it is the same on one device, on a DataParallelTable (whose
// first replica holds the batch's whole gradient after backward) and on every rank of a
// DistributedDataParallelTable (after its sum): clip between backward and the optimizer's step.
// The sums run on the buffer's device, in parts whose squares are summed in double, and the
// parts' sums are added on the host in double; the buffers for them are made once, so a steady
// step allocates nothing. Reading the norm waits for the device where it is not the host.
#pragma once

#include "nn/tensor/Tensor.h"

namespace nn {

/// Clips a flat gradient buffer by its global L2 norm or by value (see the file comment).
class GradientClipper {
 public:
  /// Over `gradients`, a contiguous buffer (shared, not copied); an empty one has norm 0.
  explicit GradientClipper(const Tensor& gradients);

  /// The L2 norm of the gradients: the square root of the sum of their squares.
  double norm();
  /// Scales the gradients by maxNorm / (norm + 1e-6) where their norm is above maxNorm (PyTorch's
  /// clip_grad_norm_ with its defaults), and returns the norm before. A norm that is not finite
  /// is an nn::Error, the gradients left as they were (PyTorch's error_if_nonfinite); maxNorm
  /// must be positive.
  double clipNorm(double maxNorm);
  /// Clamps every gradient into [-value, value] (clip_grad_value_); value must be positive.
  void clipValue(double value);

 private:
  Tensor gradients_;
  Tensor partial_;  // the parts' sums of squares, on the gradients' device
  Tensor host_;     // the same on the host, where the device is not
  int64_t parts_ = 0;
};

}  // namespace nn
