// ElementwiseKernels: the element-wise work of the library (activations, the SGD step) for
// one device type, as a table of plain functions over raw pointers: the CPU table is in nn,
// the CUDA table is registered by //cunn when it is linked (Torch7's THNN / THCUNN: one
// name, one argument order for both). Modules check shapes and devices and size their
// buffers, then make one call here per operation; each per-element formula is the nn/math
// function that both tables call.
#pragma once

#include <cstdint>

#include "nn/Device.h"
#include "nn/math/Sgd.h"

namespace nn {

enum class Activation { ReLU, Tanh, Sigmoid };

struct ElementwiseKernels {
  /// out[i] = f(in[i]) for i < n, contiguous on `device`; out may be in (in place).
  void (*activationForward)(const Device& device, Activation activation, const float* in, float* out, int64_t n);
  /// gradIn[i] = dOut/dIn at element i times gradOut[i]. ReLU reads in (where the input was
  /// overwritten by the output, pass the output: it has the input's signs), Tanh and Sigmoid
  /// read out. gradIn may be gradOut (in place).
  void (*activationBackward)(const Device& device, Activation activation, const float* in, const float* out,
                             const float* gradOut, float* gradIn, int64_t n);
  /// One SGD step (nn/math/Sgd.h) over n elements; velocity is null without momentum.
  void (*sgdStep)(const Device& device, float* x, const float* gradient, float* velocity, int64_t n,
                  const math::SgdStep& step);
};

/// The table for `device`'s type; an nn::Error where none is registered (CUDA without //cunn).
const ElementwiseKernels& elementwiseKernels(const Device& device);
/// Installs the table of a device type; cunn calls it once for CUDA when it is linked.
void registerElementwiseKernels(DeviceType type, const ElementwiseKernels& kernels);

}  // namespace nn
