// ConvolutionKernels: the work of nn::SpatialConvolution on one device type, over raw
// contiguous NCHW arrays: input [batch, inPlanes, height, width], weight [outPlanes, inPlanes,
// kH, kW], bias [outPlanes], output [batch, outPlanes, outHeight, outWidth]. The CPU table is
// in nn/cpu (im2col + OpenBLAS), the CUDA table in cunn/cuda (cuDNN); see
// nn/backend/Backend.h. The module checks shapes and devices and sizes output and gradInput.
#pragma once

#include <cstdint>

#include "nn/Device.h"
#include "nn/Tensor.h"

namespace nn {

/// The sizes of one call.
struct ConvolutionShape {
  int64_t batch, inPlanes, height, width;
  int64_t outPlanes, kH, kW, dH, dW, padH, padW;
  int64_t outHeight, outWidth;
  /// Kernel taps dilH rows and dilW columns apart (SpatialDilatedConvolution).
  int64_t dilH = 1, dilW = 1;
};

struct ConvolutionKernels {
  /// output = bias (where not null) + the cross-correlation of input with weight. `workspace`
  /// is the module's scratch tensor on `device`, which the kernel resizes as it needs (a steady
  /// step reuses it).
  void (*updateOutput)(const Device& device, const ConvolutionShape& shape, const float* input, const float* weight,
                       const float* bias, float* output, Tensor& workspace);
  /// gradInput = the gradient of the output with respect to the input, given gradOutput.
  void (*updateGradInput)(const Device& device, const ConvolutionShape& shape, const float* gradOutput,
                          const float* weight, float* gradInput, Tensor& workspace);
  /// gradWeight += scale dOutput/dWeight . gradOutput; gradBias (where not null) += scale times
  /// gradOutput summed over the batch and positions of each plane.
  void (*accGradParameters)(const Device& device, const ConvolutionShape& shape, const float* input,
                            const float* gradOutput, float* gradWeight, float* gradBias, float scale,
                            Tensor& workspace);
};

}  // namespace nn
