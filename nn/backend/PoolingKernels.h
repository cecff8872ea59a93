// PoolingKernels: the work of nn::SpatialMaxPooling, nn::SpatialAveragePooling and the
// resampling modules (SpatialAdaptiveAveragePooling, SpatialUpSamplingNearest) on one device
// type, over raw contiguous arrays of planes (a plane is one channel of one sample): input and
// gradInput [planes, height, width], output, indices and gradOutput [planes, outHeight,
// outWidth]. The CPU table is in nn/cpu, the CUDA table in nn/cuda; see nn/backend/Backend.h.
// The modules check shapes and devices and size the outputs; window math is nn/math/Pooling.h.
#pragma once

#include <cstdint>

#include "nn/math/Pooling.h"
#include "nn/tensor/Device.h"

namespace nn {

/// The sizes of one call.
struct PoolingShape {
  /// Planes: samples times channels (the channels of a 3-D input).
  int64_t planes;
  /// Input height, without the padding.
  int64_t height;
  /// Input width, without the padding.
  int64_t width;
  /// Output height.
  int64_t outHeight;
  /// Output width.
  int64_t outWidth;
  /// Window height.
  int64_t kH;
  /// Window width.
  int64_t kW;
  /// Step between windows along the height.
  int64_t dH;
  /// Step between windows along the width.
  int64_t dW;
  /// Padding rows above and below the input.
  int64_t padH;
  /// Padding columns left and right of the input.
  int64_t padW;
};

/// The shape of `planes` planes of height x width cells under kH x kW windows moved by dH, dW over
/// an input padded by padH, padW; output sizes by math::poolOutputSize.
inline PoolingShape poolingShape(int64_t planes, int64_t height, int64_t width, int64_t kH, int64_t kW, int64_t dH,
                                 int64_t dW, int64_t padH, int64_t padW, bool ceilMode) {
  return PoolingShape{planes,
                      height,
                      width,
                      math::poolOutputSize(height, kH, dH, padH, ceilMode),
                      math::poolOutputSize(width, kW, dW, padW, ceilMode),
                      kH,
                      kW,
                      dH,
                      dW,
                      padH,
                      padW};
}

/// math::poolWindow of output cell (oy, ox) under this shape.
inline NN_HD math::PoolWindow poolWindowOf(const PoolingShape& s, int64_t oy, int64_t ox) {
  return math::poolWindow(oy, ox, s.kH, s.kW, s.dH, s.dW, s.padH, s.padW, s.height, s.width);
}

/// math::avgPoolDivisor of window `w` under this shape.
inline NN_HD int64_t avgPoolDivisorOf(const PoolingShape& s, const math::PoolWindow& w, bool countIncludePad) {
  return math::avgPoolDivisor(w.startY, w.startX, s.kH, s.kW, s.height, s.width, s.padH, s.padW, countIncludePad);
}

/// Windows that tile the input without overlap or padding, each window whole: every input cell
/// lies in at most one window. Max pooling's CPU table takes faster paths there, and writes each
/// gradInput cell once instead of adding to 0 (so a gradient of -0 stays -0); the CUDA table does
/// the same.
inline bool disjointWindows(const PoolingShape& s) {
  return math::poolWindowsDisjoint(s.height, s.kH, s.dH, s.padH, s.outHeight) &&
         math::poolWindowsDisjoint(s.width, s.kW, s.dW, s.padW, s.outWidth);
}

/// The two passes of a resampling of planes, [planes, height, width] to [planes, outHeight,
/// outWidth] (the shape's window fields unused): forward writes every output cell, backward
/// every gradInput cell, each from the cells it depends on (no scatter, no atomics).
struct ResamplingKernels {
  /// Writes output [planes, outHeight, outWidth] from input [planes, height, width].
  void (*forward)(const Device& device, const PoolingShape& shape, const float* input, float* output);
  /// Writes gradInput [planes, height, width] from gradOutput [planes, outHeight, outWidth] (overwrites, adds nothing).
  void (*backward)(const Device& device, const PoolingShape& shape, const float* gradOutput, float* gradInput);
};

/// The pooling and resampling modules' passes on one device type, over the planes of the file comment.
struct PoolingKernels {
  /// output = the maximum of each window, indices = its plane index (y * width + x) as a float;
  /// the first of equal maxima wins.
  void (*maxUpdateOutput)(const Device& device, const PoolingShape& shape, const float* input, float* output,
                          float* indices);
  /// gradInput = each gradOutput element at the cell its window's index names, summed where
  /// windows share a winner. Returns false where some index names no cell of the plane (the
  /// indices are not of a forward on this input's sizes); the CUDA table does not look (that
  /// would wait for the device) and passes such a window's gradient to no cell.
  bool (*maxUpdateGradInput)(const Device& device, const PoolingShape& shape, const float* gradOutput,
                             const float* indices, float* gradInput);
  /// output = the mean of each window, over math::avgPoolDivisor's count.
  void (*averageUpdateOutput)(const Device& device, const PoolingShape& shape, bool countIncludePad, const float* input,
                              float* output);
  /// gradInput = each window's gradOutput over math::avgPoolDivisor's count, added to each of its cells inside
  /// the input, summed over windows.
  void (*averageUpdateGradInput)(const Device& device, const PoolingShape& shape, bool countIncludePad,
                                 const float* gradOutput, float* gradInput);
  /// SpatialAdaptiveAveragePooling: math::adaptiveAvgPoolOutput and adaptiveAvgPoolGradient.
  ResamplingKernels adaptiveAverage;
  /// SpatialUpSamplingNearest by the scale outHeight / height: each output cell a copy of
  /// input cell (y / scale, x / scale); math::upSamplingNearestGradient.
  ResamplingKernels upSamplingNearest;
};

}  // namespace nn
