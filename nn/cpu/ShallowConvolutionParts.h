// The parts of the shallow route of the CPU convolution (ShallowConvolution.h) that its AVX-512
// and AVX2 forms (ShallowConvolution.cpp, ShallowConvolutionAvx2.cpp) share: the layer as the
// loops see it, its padded copies, the arrangement of the kernels and the cut of the batch. No
// vector code: each form's tiles are its own. Included by those two files only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "nn/backend/ConvolutionKernels.h"
#include "nn/core/ComputeThreads.h"
#include "nn/core/Device.h"
#include "nn/core/Tensor.h"

namespace nn::cpu::shallow {

// Output planes of a tile, in both forms.
constexpr int kPlanes = 4;

// The layer as these loops see it: size x size kernels of stride 1, padding `pad` on every side.
struct Layer {
  int64_t batch, inPlanes, outPlanes, height, width, pad, size, outHeight, outWidth;

  int64_t rowFloats() const { return width + 2 * pad; }
  int64_t planeFloats() const { return (height + 2 * pad) * rowFloats(); }
  // A sample's padded planes, then zeros for the vectors of the last rows, which run past the
  // row's end (into the next row elsewhere) by up to 32 floats and a kernel's width.
  int64_t paddedFloats() const { return inPlanes * planeFloats() + 32 + size; }
  int64_t taps() const { return size * size; }
  int64_t positions() const { return outHeight * outWidth; }
};

inline Layer layerOf(const ConvolutionShape& s) {
  return {s.batch, s.inPlanes, s.outPlanes, s.height, s.width, s.padH, s.kH, s.outHeight, s.outWidth};
}

// Sample `input` ([inPlanes][height][width]) into the interior of `padded`, whose border the
// caller has zeroed.
inline void pad(const Layer& l, const float* input, float* padded) {
  for (int64_t c = 0; c < l.inPlanes; ++c)
    for (int64_t y = 0; y < l.height; ++y)
      std::memcpy(padded + c * l.planeFloats() + (y + l.pad) * l.rowFloats() + l.pad,
                  input + (c * l.height + y) * l.width, l.width * sizeof(float));
}

// The forward: the kernels arranged as kernels[o / kPlanes][c][tap][o % kPlanes], the batch cut
// into one part per compute thread, each a range of whole samples, each sample copied with its
// border and given to sample(l, padded, kernels, bias, output of the sample).
template <typename Sample>
void forward(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
             const float* bias, float* output, Tensor& workspace, Sample sample) {
  const Layer l = layerOf(s);
  const int parts = parallelParts(device, l.batch);
  const int64_t taps = l.taps(), kernelFloats = l.outPlanes * l.inPlanes * taps;
  workspace.resize_({kernelFloats + parts * l.paddedFloats()}, device);
  float* kernels = workspace.data();
  for (int64_t o = 0; o < l.outPlanes; ++o)
    for (int64_t c = 0; c < l.inPlanes; ++c)
      for (int64_t t = 0; t < taps; ++t)
        kernels[((o / kPlanes * l.inPlanes + c) * taps + t) * kPlanes + o % kPlanes] =
            weight[(o * l.inPlanes + c) * taps + t];
  parallelFor(device, parts, [&](int part) {
    float* padded = kernels + kernelFloats + part * l.paddedFloats();
    std::fill(padded, padded + l.paddedFloats(), 0.f);
    const Range samples = partRange(l.batch, parts, part);
    const int64_t inFloats = l.inPlanes * l.height * l.width, outFloats = l.outPlanes * l.positions();
    for (int64_t n = samples.begin; n < samples.end; ++n) {
      pad(l, input + n * inFloats, padded);
      sample(l, static_cast<const float*>(padded), static_cast<const float*>(kernels), bias, output + n * outFloats);
    }
  });
}

}  // namespace nn::cpu::shallow
