// Window math of 2-D max and average pooling (Torch7's THNN, which PyTorch keeps).
//
// Output position o along one axis covers input coordinates [o * stride - pad,
// o * stride - pad + kernel); the parts outside [0, input) are padding.
#pragma once

#include <cstdint>

#include "nn/math/HostDevice.h"

namespace nn::math {

/// Output positions along one axis: floor (or, in ceil mode, ceil) of
/// (input + 2 pad - kernel) / stride, plus one. In ceil mode a last window that would start
/// beyond the input and its left padding is dropped, as PyTorch does (Torch7 only when padded),
/// so that every window holds at least one input cell. The caller checks
/// input + 2 pad >= kernel and pad <= kernel / 2.
NN_HD inline int64_t poolOutputSize(int64_t input, int64_t kernel, int64_t stride, int64_t pad, bool ceilMode) {
  const int64_t span = input + 2 * pad - kernel;
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceilMode && (out - 1) * stride >= input + pad) --out;
  return out;
}

/// First input coordinate of window `out`; negative in the padding.
NN_HD inline int64_t poolWindowStart(int64_t out, int64_t stride, int64_t pad) { return out * stride - pad; }

/// The window [start, start + kernel) clipped to the input: [first, end).
NN_HD inline int64_t poolClippedFirst(int64_t start) { return start > 0 ? start : 0; }
/// The end of the clipped window: min(start + kernel, input).
NN_HD inline int64_t poolClippedEnd(int64_t start, int64_t kernel, int64_t input) {
  return start + kernel < input ? start + kernel : input;
}

/// Window (oy, ox) of a height x width plane: where it starts (negative in the padding), and its
/// cells clipped to the input, [y0, y1) x [x0, x1).
struct PoolWindow {
  /// The window's first input row; negative in the padding.
  int64_t startY;
  /// The window's first input column; negative in the padding.
  int64_t startX;
  /// The first row of the window inside the input.
  int64_t y0;
  /// One past the last row of the window inside the input.
  int64_t y1;
  /// The first column of the window inside the input.
  int64_t x0;
  /// One past the last column of the window inside the input.
  int64_t x1;
};
/// Window (oy, ox) of kH x kW cells, moved by dH, dW, over a height x width plane padded by padH, padW.
NN_HD inline PoolWindow poolWindow(int64_t oy, int64_t ox, int64_t kH, int64_t kW, int64_t dH, int64_t dW, int64_t padH,
                                   int64_t padW, int64_t height, int64_t width) {
  const int64_t startY = poolWindowStart(oy, dH, padH), startX = poolWindowStart(ox, dW, padW);
  return PoolWindow{startY,
                    startX,
                    poolClippedFirst(startY),
                    poolClippedEnd(startY, kH, height),
                    poolClippedFirst(startX),
                    poolClippedEnd(startX, kW, width)};
}

/// Windows that tile the input along one axis without overlap or padding (kernel == stride,
/// each window whole): every input coordinate lies in at most one window.
NN_HD inline bool poolWindowsDisjoint(int64_t input, int64_t kernel, int64_t stride, int64_t pad, int64_t outputSize) {
  return kernel == stride && pad == 0 && outputSize * kernel <= input;
}

/// The windows along one axis that hold input coordinate `in` (0 <= in < input): the output
/// positions [first, end), empty where no window reaches `in`. Window o holds `in` where
/// o * stride - pad <= in < o * stride - pad + kernel.
NN_HD inline int64_t poolFirstWindowOver(int64_t in, int64_t kernel, int64_t stride, int64_t pad) {
  const int64_t last = in + pad - kernel;  // windows starting here or before end before `in`
  return last < 0 ? 0 : last / stride + 1;
}
/// The end of that range: one past the last window that holds `in`, at most outputSize.
NN_HD inline int64_t poolEndWindowOver(int64_t in, int64_t stride, int64_t pad, int64_t outputSize) {
  const int64_t end = (in + pad) / stride + 1;
  return end < outputSize ? end : outputSize;
}

/// Max pooling's running choice: a strictly greater value replaces the best so far, so the
/// first of equal maxima wins; NaN replaces anything, so that it propagates (Torch7, PyTorch).
NN_HD inline bool maxPoolTakes(float value, float best) { return value > best || value != value; }

/// One cell of a window's scan in row-major order: the cell, at plane index `at`, replaces the
/// best so far where maxPoolTakes says so, without a branch. Plane indices are int32_t (a plane
/// holds at most 2^24 cells, exact as floats) so that on the CPU the selects vectorise alongside
/// the floats.
NN_HD inline void maxPoolScan(float value, int32_t at, float& best, int32_t& bestAt) {
  const bool take = maxPoolTakes(value, best);
  best = take ? value : best;
  bestAt = take ? at : bestAt;
}

/// Winner of the kH x kW window of a plane `width` cells wide whose top-left cell is `cell`, at
/// plane index `at`: its value, and its plane index as a float (the module's `indices`).
NN_HD inline void maxPoolWindow(const float* cell, int64_t width, int64_t kH, int64_t kW, int32_t at, float& value,
                                float& index) {
  float best = cell[0];
  int32_t bestAt = at;
  for (int64_t ky = 0; ky < kH; ++ky)
    for (int64_t kx = 0; kx < kW; ++kx)
      maxPoolScan(cell[ky * width + kx], at + static_cast<int32_t>(ky * width + kx), best, bestAt);
  value = best;
  index = static_cast<float>(bestAt);
}

/// Gradient that a max-pooling window passes to its cell `cell`: the window's gradOutput if
/// that cell won the window, else nothing. Indices are plane offsets stored as floats, exact up
/// to 2^24.
NN_HD inline float maxPoolCellGradient(float cell, float winner, float gradOutput) {
  return cell == winner ? gradOutput : 0.f;
}

/// Number of cells average pooling divides window (startY, startX) by: the window clipped
/// to the padded input when padding counts (Torch7's default count_include_pad), else the
/// window clipped to the input itself.
NN_HD inline int64_t avgPoolDivisor(int64_t startY, int64_t startX, int64_t kH, int64_t kW, int64_t inputH,
                                    int64_t inputW, int64_t padH, int64_t padW, bool countIncludePad) {
  if (countIncludePad) {
    const int64_t endY = startY + kH < inputH + padH ? startY + kH : inputH + padH;
    const int64_t endX = startX + kW < inputW + padW ? startX + kW : inputW + padW;
    return (endY - startY) * (endX - startX);
  }
  return (poolClippedEnd(startY, kH, inputH) - poolClippedFirst(startY)) *
         (poolClippedEnd(startX, kW, inputW) - poolClippedFirst(startX));
}

/// Average pooling's share of a window: its sum (forward) or its gradient (backward) over its
/// divisor.
NN_HD inline float avgPoolMean(float value, int64_t divisor) { return value / static_cast<float>(divisor); }

/// Average pooling's window: the cells [y0, y1) x [x0, x1) of a plane `width` cells wide summed
/// row by row, over `divisor`.
NN_HD inline float avgPoolWindow(const float* plane, int64_t width, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                                 int64_t divisor) {
  float sum = 0.f;
  for (int64_t y = y0; y < y1; ++y)
    for (int64_t x = x0; x < x1; ++x) sum += plane[y * width + x];
  return avgPoolMean(sum, divisor);
}

/// Adaptive pooling (Torch7's SpatialAdaptiveAveragePooling, PyTorch's adaptive_avg_pool2d):
/// output o of `out` positions along an axis of `in` cells covers [adaptiveStart(o, in, out),
/// adaptiveEnd(o, in, out)) = [floor(o in / out), ceil((o + 1) in / out)). Swapped, the same
/// functions give the outputs whose windows hold input cell i: [adaptiveStart(i, out, in),
/// adaptiveEnd(i, out, in)).
NN_HD inline int64_t adaptiveStart(int64_t o, int64_t in, int64_t out) { return o * in / out; }
/// ceil((o + 1) in / out): one past the last cell of output o's window.
NN_HD inline int64_t adaptiveEnd(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

/// A window's value over its rows, then over its columns (PyTorch's order of the divisions).
NN_HD inline float adaptiveAvgPoolMean(float value, int64_t rows, int64_t cols) {
  return value / static_cast<float>(rows) / static_cast<float>(cols);
}

/// Output cell (oy, ox) of adaptive average pooling of a height x width plane to outHeight x
/// outWidth: its window's cells summed row by row, over the window's size.
NN_HD inline float adaptiveAvgPoolOutput(const float* plane, int64_t height, int64_t width, int64_t outHeight,
                                         int64_t outWidth, int64_t oy, int64_t ox) {
  const int64_t y0 = adaptiveStart(oy, height, outHeight), y1 = adaptiveEnd(oy, height, outHeight);
  const int64_t x0 = adaptiveStart(ox, width, outWidth), x1 = adaptiveEnd(ox, width, outWidth);
  float sum = 0.f;
  for (int64_t y = y0; y < y1; ++y)
    for (int64_t x = x0; x < x1; ++x) sum += plane[y * width + x];
  return adaptiveAvgPoolMean(sum, y1 - y0, x1 - x0);
}

/// The gradient of input cell (y, x) of that pooling: each covering window's gradOutput over
/// its size, summed over the windows row-major (the order in which a scatter over the windows
/// would add them).
NN_HD inline float adaptiveAvgPoolGradient(const float* gradOutputPlane, int64_t height, int64_t width,
                                           int64_t outHeight, int64_t outWidth, int64_t y, int64_t x) {
  float sum = 0.f;
  for (int64_t oy = adaptiveStart(y, outHeight, height); oy < adaptiveEnd(y, outHeight, height); ++oy) {
    const int64_t rows = adaptiveEnd(oy, height, outHeight) - adaptiveStart(oy, height, outHeight);
    for (int64_t ox = adaptiveStart(x, outWidth, width); ox < adaptiveEnd(x, outWidth, width); ++ox) {
      const int64_t cols = adaptiveEnd(ox, width, outWidth) - adaptiveStart(ox, width, outWidth);
      sum += adaptiveAvgPoolMean(gradOutputPlane[oy * outWidth + ox], rows, cols);
    }
  }
  return sum;
}

/// Nearest-neighbour up-sampling by an integer scale (Torch7's SpatialUpSamplingNearest):
/// output cell (oy, ox) copies input cell (oy / scale, ox / scale).
NN_HD inline float upSamplingNearestOutput(const float* plane, int64_t width, int64_t scale, int64_t oy, int64_t ox) {
  return plane[oy / scale * width + ox / scale];
}

/// The gradient of input cell (y, x) of that up-sampling: the sum of the scale x scale output
/// cells that copy it, row-major.
NN_HD inline float upSamplingNearestGradient(const float* gradOutputPlane, int64_t outWidth, int64_t scale, int64_t y,
                                             int64_t x) {
  float sum = 0.f;
  for (int64_t dy = 0; dy < scale; ++dy)
    for (int64_t dx = 0; dx < scale; ++dx) sum += gradOutputPlane[(y * scale + dy) * outWidth + x * scale + dx];
  return sum;
}

}  // namespace nn::math
