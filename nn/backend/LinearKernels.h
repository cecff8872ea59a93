// LinearKernels: the products of nn::Linear on one device type, over raw row-major
// matrices: x [batch, in], W [out, in], b [out], y [batch, out]. The CPU table is in nn/cpu
// (nn/cpu/DirectLinear.h or OpenBLAS), the CUDA table in nn/cuda (cuBLAS); see nn/backend/Backend.h.
#pragma once

#include <cstdint>

#include "nn/tensor/Device.h"
#include "nn/tensor/Tensor.h"

namespace nn {

/// nn::Linear's passes on one device type, over the row-major matrices of the file comment.
struct LinearKernels {
  /// y = x W^T, plus b on every row where bias is not null. `workspace` is the module's, for the
  /// kernels to size and use (the CPU's rearranged operands).
  void (*updateOutput)(const Device& device, const float* x, const float* weight, const float* bias, float* y,
                       int64_t batch, int64_t in, int64_t out, Tensor& workspace);
  /// gradX = gradY W.
  void (*updateGradInput)(const Device& device, const float* gradY, const float* weight, float* gradX, int64_t batch,
                          int64_t in, int64_t out, Tensor& workspace);
  /// gradW += scale gradY^T x; gradB[j] += scale gradY[i][j] for i = 0, 1, ... in that order
  /// (where gradBias is not null).
  void (*accGradParameters)(const Device& device, const float* x, const float* gradY, float* gradWeight,
                            float* gradBias, int64_t batch, int64_t in, int64_t out, float scale);
};

}  // namespace nn
