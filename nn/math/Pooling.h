// Window math of 2-D max and average pooling (Torch7's THNN, which PyTorch keeps).
//
// Output position o along one axis covers input coordinates [o * stride - pad,
// o * stride - pad + kernel); the parts outside [0, input) are padding.
#pragma once

#include <cstdint>

#include "nn/HostDevice.h"

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
NN_HD inline int64_t poolClippedEnd(int64_t start, int64_t kernel, int64_t input) {
  return start + kernel < input ? start + kernel : input;
}

/// Max pooling's running choice: a strictly greater value replaces the best so far, so the
/// first of equal maxima wins; NaN replaces anything, so that it propagates (Torch7, PyTorch).
NN_HD inline bool maxPoolTakes(float value, float best) { return value > best || value != value; }

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

}  // namespace nn::math
