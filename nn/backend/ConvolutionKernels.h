// ConvolutionKernels: the work of nn::SpatialConvolution on one device type, over raw
// contiguous NCHW arrays: input [batch, inPlanes, height, width], weight [outPlanes, inPlanes /
// groups, kH, kW], bias [outPlanes], output [batch, outPlanes, outHeight, outWidth]. The CPU table is
// in nn/cpu (im2col + OpenBLAS), the CUDA table in nn/cuda (cuDNN); see
// nn/backend/Backend.h. The module checks shapes and devices and sizes output and gradInput.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "nn/tensor/Checked.h"
#include "nn/tensor/Device.h"
#include "nn/tensor/Tensor.h"

namespace nn {

/// The sizes of one call.
struct ConvolutionShape {
  /// Samples; 1 for a 3-D input.
  int64_t batch;
  /// Input planes (nInputPlane).
  int64_t inPlanes;
  /// Input height, without the padding.
  int64_t height;
  /// Input width, without the padding.
  int64_t width;
  /// Output planes (nOutputPlane).
  int64_t outPlanes;
  /// Kernel height, in taps.
  int64_t kH;
  /// Kernel width, in taps.
  int64_t kW;
  /// Stride along the height.
  int64_t dH;
  /// Stride along the width.
  int64_t dW;
  /// Zero rows added above and below the input.
  int64_t padH;
  /// Zero columns added left and right of the input.
  int64_t padW;
  /// Output height: math::convOutputSize(height, kH, dH, padH, dilH).
  int64_t outHeight;
  /// Output width: math::convOutputSize(width, kW, dW, padW, dilW).
  int64_t outWidth;
  /// Kernel taps dilH rows and dilW columns apart (SpatialDilatedConvolution).
  int64_t dilH = 1;
  /// Kernel taps dilW columns apart; 1 without dilation.
  int64_t dilW = 1;
  /// Groups of planes convolved apart (PyTorch's Conv2d(groups=...)): output planes
  /// [g outPlanes / groups, (g + 1) outPlanes / groups) see only input planes
  /// [g inPlanes / groups, (g + 1) inPlanes / groups); both divisible by it. 1 without grouping.
  int64_t groups = 1;
};

/// Whether each buffer that a backend derives from the shape holds at most kMaxElements floats
/// for the whole batch: the unfolded input (a row per input plane and kernel tap, a column per
/// output position), the zero-padded input planes, the output and a weight gradient per sample.
/// The modules refuse other shapes, sizes and padding alike, so that no kernel's arithmetic on
/// them (its workspace's size included) overflows.
inline bool convolutionFits(const ConvolutionShape& s) {
  // The product of `factors` in `out`, at most kMaxElements.
  const auto within = [](std::initializer_list<int64_t> factors, int64_t& out) {
    out = 1;
    for (int64_t f : factors)
      if (f < 0 || !mulInto(out, f, out)) return false;
    return out <= kMaxElements;
  };
  int64_t rows = 0, positions = 0, columns = 0, paddedH = 0, paddedW = 0, padded = 0, output = 0, weights = 0;
  return within({s.inPlanes, s.kH, s.kW}, rows) && within({s.outHeight, s.outWidth}, positions) &&
         within({rows, positions, s.batch}, columns) && addInto(s.height, 2 * s.padH, paddedH) &&
         addInto(s.width, 2 * s.padW, paddedW) && within({paddedH, paddedW, s.batch}, padded) &&
         within({positions, s.outPlanes, s.batch}, output) && within({rows, s.outPlanes + 1, s.batch}, weights);
}

/// The convolution's passes on one device type, over the NCHW arrays of the file comment.
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
