// SoftMaxKernels: the work of nn::SoftMax and nn::LogSoftMax on one device type, over a
// contiguous input seen as [outer, classes, inner] (nn/math/SoftMax.h). The CPU table is in
// nn/cpu (loops over the nn/math formulas), the CUDA table in nn/cuda (cuDNN); see
// nn/backend/Backend.h. The modules' side is nn/modules/SoftMaxPasses.h.
#pragma once

#include "nn/math/SoftMax.h"
#include "nn/tensor/Device.h"

namespace nn {

/// nn::SoftMax's and nn::LogSoftMax's passes on one device type, x, y, gradOut and gradIn contiguous
/// [outer, classes, inner].
struct SoftMaxKernels {
  /// y = softmax(x) or, where log is true, log-softmax(x), over the classes of each column.
  /// columns: scratch of 2 * inner floats on the device (the CPU loops keep each column's
  /// running max and sum there).
  void (*updateOutput)(const Device& device, bool log, const float* x, float* y, const math::SoftMaxShape& shape,
                       float* columns);
  /// gradIn from the forward's output y and gradOut; columns: scratch of inner floats.
  void (*updateGradInput)(const Device& device, bool log, const float* y, const float* gradOut, float* gradIn,
                          const math::SoftMaxShape& shape, float* columns);
};

}  // namespace nn
