// SoftMaxKernels: the work of nn::SoftMax and nn::LogSoftMax on one device type, over a
// contiguous input seen as [outer, classes, inner] (nn/math/SoftMax.h). The CPU table is in
// nn (loops over the nn/math formulas), the CUDA table is installed by //cunn (cuDNN); see
// nn/KernelTable.h. The two modules share the checks and calls below.
#pragma once

#include "nn/Device.h"
#include "nn/Module.h"
#include "nn/math/SoftMax.h"

namespace nn {

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

/// The table for `device`'s type.
const SoftMaxKernels& softMaxKernels(const Device& device);
/// Installs the table of a device type; cunn calls it once for CUDA when it is linked.
void registerSoftMaxKernels(DeviceType type, const SoftMaxKernels& kernels);

/// The updateOutput of SoftMax (log false) and LogSoftMax (log true): checks the input's rank
/// (an nn::Error naming `module`), sizes output and the scratch `columns`, calls the table.
void softMaxUpdateOutput(const Module& module, bool log, const Tensor& input, Tensor& output, Tensor& columns);
/// Their updateGradInput, from the output of the forward on `input`.
void softMaxUpdateGradInput(const Module& module, bool log, const Tensor& input, const Tensor& gradOutput,
                            const Tensor& output, Tensor& gradInput, Tensor& columns);

}  // namespace nn
