// Index math of a 2-D convolution unfolded into a matrix (im2col) and folded back (col2im).
//
// The column matrix has one row per (input plane, kernel row, kernel column) and one
// column per output position; row (c, ky, kx) at output (oy, ox) holds the input pixel
// (oy * dH - padH + ky dilH, ox * dW - padW + kx dilW) of plane c, or 0 where that lies in the
// padding. The functions below take a tap's offset, ky dilH (ky without dilation).
#pragma once

#include <cstdint>

#include "nn/math/HostDevice.h"

namespace nn::math {

/// The span of a kernel of `kernel` taps `dilation` cells apart: dilation (kernel - 1) + 1.
NN_HD inline int64_t convKernelSpan(int64_t kernel, int64_t dilation) { return dilation * (kernel - 1) + 1; }

/// Output positions along one axis: floor((input + 2 pad - span) / stride) + 1. The caller
/// checks input + 2 pad >= span (the window fits at least once).
NN_HD inline int64_t convOutputSize(int64_t input, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation = 1) {
  return (input + 2 * pad - convKernelSpan(kernel, dilation)) / stride + 1;
}

/// Input coordinate that kernel tap `tap` reads at output position `out`; outside
/// [0, input) it is padding.
NN_HD inline int64_t convInputCoord(int64_t out, int64_t tap, int64_t stride, int64_t pad) {
  return out * stride - pad + tap;
}

/// First output position at which tap `tap` reads inside the input (coordinate >= 0), at
/// most outputSize (a tap that only ever reads padding).
NN_HD inline int64_t convFirstInside(int64_t tap, int64_t stride, int64_t pad, int64_t outputSize) {
  const int64_t before = pad - tap;  // padding cells this tap must step over
  const int64_t first = before <= 0 ? 0 : (before + stride - 1) / stride;
  return first < outputSize ? first : outputSize;
}

/// One past the last output position at which tap `tap` reads inside the input
/// (coordinate < input), at most outputSize. For input >= 1 it is never below
/// convFirstInside, so [first, end) is a valid, possibly empty, range.
NN_HD inline int64_t convEndInside(int64_t input, int64_t tap, int64_t stride, int64_t pad, int64_t outputSize) {
  const int64_t limit = input + pad - tap;  // out * stride must stay below this
  const int64_t end = limit <= 0 ? 0 : (limit + stride - 1) / stride;
  return end < outputSize ? end : outputSize;
}

/// Row of the column matrix that holds input plane `plane` under kernel tap (ky, kx):
/// the same order as the weight's [nOutputPlane, nInputPlane, kH, kW] inner dimensions,
/// so that the weight is the left factor of the product as it is stored.
NN_HD inline int64_t im2colRow(int64_t plane, int64_t ky, int64_t kx, int64_t kH, int64_t kW) {
  return (plane * kH + ky) * kW + kx;
}

}  // namespace nn::math
