// The shallow route of the CPU convolution (ShallowConvolution.h). The batch is cut into one part
// per compute thread, each a range of whole samples; a part copies each of its samples with a
// zero border (padded) and works on it in the cache; every sample gets the same floats whatever
// the thread count. The tiles are written once over Vec (Vec.h) in the second half of this file,
// which VecLevels.h includes once per level: 16 lanes and 32 registers at avx512, 8 and 16 at
// avx2. Each value is its plane's bias plus its taps' products over the input planes and taps in
// order, at either level: the same floats.
#ifndef NN_VEC_LEVEL

#include "nn/cpu/ShallowConvolution.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "nn/cpu/Isa.h"
#include "nn/cpu/Multiversion.h"
#include "nn/cpu/Vec.h"
#include "nn/runtime/ComputeThreads.h"
#include "nn/tensor/Error.h"

namespace nn::cpu::shallow {

// Output planes of a tile.
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

#define NN_VEC_SOURCE "nn/cpu/ShallowConvolution.cpp"
#include "nn/cpu/VecLevels.h"

namespace nn::cpu {

bool shallowFits(const ConvolutionShape& s) {
  const bool shape = s.inPlanes >= 1 && s.inPlanes <= 4 && s.kH == s.kW && (s.kH == 3 || s.kH == 5) && s.dH == 1 &&
                     s.dW == 1 && s.dilH == 1 && s.dilW == 1 && s.groups == 1 && s.padH == s.padW && s.padH >= 0 &&
                     s.padH < s.kH;
  return isaAtLeast(Isa::avx2) && shape && s.outWidth >= 1 && s.outWidth <= 32 && s.outPlanes % shallow::kPlanes == 0;
}

void shallowUpdateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                         const float* bias, float* output, Tensor& workspace) {
  // shallowFits keeps every call off machines with neither form.
#if NN_VEC256
  NN_CPU_FORM(shallowUpdateOutput(device, s, input, weight, bias, output, workspace));
#else
  NN_CHECK(false, "nn.SpatialConvolution: the shallow route is not in this build");
#endif
}

}  // namespace nn::cpu

#else  // the tiles, in namespace NN_VEC_LEVEL over its Vec (VecLevels.h)

namespace nn::cpu::NN_VEC_LEVEL {

namespace {

using namespace shallow;
using Reg = Vec::Reg;

// A tile: the sums of kPlanes output planes x R rows x V vectors of a row, kTileSums of them (24
// of AVX-512's 32 registers, 12 of AVX2's 16), beside the row's input vectors and a broadcast
// weight; each input vector loaded once for the planes and each weight broadcast once for the
// tile's rows. A row of two vectors (17 to 32 positions) is one tile wide where the registers
// hold it (AVX-512), two tiles of one vector elsewhere.
constexpr int kTileSums = Vec::kRegisters == 32 ? 24 : 12;
constexpr int kMaxVectors = Vec::kRegisters == 32 ? 2 : 1;
// A tile's rows for V vectors a row.
template <int V>
constexpr int kRows = kTileSums / (kPlanes * V);

// f(K, V), each a std::integral_constant<int>, for the kernel size and the vectors of a tile of l.
template <typename F>
void byShape(const Layer& l, F f) {
  auto withSize = [&](auto v) {
    if (l.size == 3) return f(std::integral_constant<int, 3>(), v);
    f(std::integral_constant<int, 5>(), v);
  };
  // Rows of more than one vector in tiles of two where the registers hold them.
  if constexpr (kMaxVectors == 2)
    if (l.outWidth > Vec::kLanes) return withSize(std::integral_constant<int, 2>());
  withSize(std::integral_constant<int, 1>());
}

// Output planes [o, o + kPlanes) at R rows from row y, V vectors from position P of each row,
// each value its plane's bias (where not null) plus its taps' products over the input planes and
// taps in order: `in` is the padded sample at row y, column P; `kernels` the planes'
// [c][ky][kx][kPlanes], `out` plane o at row y, position P. The tile's last vector stores the
// lanes of `last`, whole where `full` (a masked store takes several times as long on Zen 3).
// Every loop over the registers' arrays is unrolled whole, which keeps them in registers (GCC 12
// at -O2 leaves some of these loops rolled and the arrays on the stack).
template <int K, int V, int R>
NN_VEC_TILE void forwardTile(const Layer& l, const float* in, const float* kernels, const float* bias, float* out,
                             Vec::Mask last, bool full) {
  const int64_t rowFloats = l.rowFloats(), planeFloats = l.planeFloats();
  Reg sums[kPlanes][R][V];
#pragma GCC unroll 32
  for (int g = 0; g < kPlanes; ++g) {
    const Reg b = Vec::set1(bias ? bias[g] : 0.f);
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 32
      for (int v = 0; v < V; ++v) sums[g][r][v] = b;
  }
  for (int64_t c = 0; c < l.inPlanes; ++c, in += planeFloats)
#pragma GCC unroll 1
    for (int ky = 0; ky < K; ++ky)
#pragma GCC unroll 1
      for (int kx = 0; kx < K; ++kx, kernels += kPlanes) {
        Reg x[R][V];
#pragma GCC unroll 32
        for (int r = 0; r < R; ++r)
#pragma GCC unroll 32
          for (int v = 0; v < V; ++v) x[r][v] = Vec::load(in + (r + ky) * rowFloats + kx + Vec::kLanes * v);
#pragma GCC unroll 32
        for (int g = 0; g < kPlanes; ++g) {
          const Reg w = Vec::broadcast(kernels + g);
#pragma GCC unroll 32
          for (int r = 0; r < R; ++r)
#pragma GCC unroll 32
            for (int v = 0; v < V; ++v) sums[g][r][v] = Vec::fmadd(x[r][v], w, sums[g][r][v]);
        }
      }
#pragma GCC unroll 32
  for (int g = 0; g < kPlanes; ++g)
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 32
      for (int v = 0; v < V; ++v) {
        float* dst = out + g * l.positions() + r * l.outWidth + Vec::kLanes * v;
        if (v == V - 1 && !full)
          Vec::store(dst, last, sums[g][r][v]);
        else
          Vec::store(dst, sums[g][r][v]);
      }
}

// One sample's output ([outPlanes][outHeight][outWidth]) from its padded copy, in tiles of V
// vectors of a row.
template <int K, int V>
void forwardSample(const Layer& l, const float* padded, const float* kernels, const float* bias, float* output) {
  constexpr int R = kRows<V>, lanes = V * Vec::kLanes;
  const int64_t kernelFloats = l.inPlanes * K * K * kPlanes;
  for (int64_t o = 0; o < l.outPlanes; o += kPlanes, kernels += kernelFloats) {
    const float* b = bias ? bias + o : nullptr;
    float* out = output + o * l.positions();
    for (int64_t x = 0; x < l.outWidth; x += lanes) {
      const int64_t lastLanes = std::min<int64_t>(l.outWidth - x, lanes) - (V - 1) * Vec::kLanes;
      const Vec::Mask last = Vec::firstLanes(lastLanes);
      const bool full = lastLanes == Vec::kLanes;
      for (int64_t y = 0; y < l.outHeight;) {
        const float* in = padded + y * l.rowFloats() + x;
        float* dst = out + y * l.outWidth + x;
        if (l.outHeight - y >= R) {
          forwardTile<K, V, R>(l, in, kernels, b, dst, last, full);
          y += R;
        } else {
          forwardTile<K, V, 1>(l, in, kernels, b, dst, last, full);
          y += 1;
        }
      }
    }
  }
}

}  // namespace

void shallowUpdateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                         const float* bias, float* output, Tensor& workspace) {
  shallow::forward(device, s, input, weight, bias, output, workspace,
                   [](const Layer& l, const float* padded, const float* kernels, const float* b, float* out) {
                     byShape(l, [&](auto k, auto v) {
                       forwardSample<decltype(k)::value, decltype(v)::value>(l, padded, kernels, b, out);
                     });
                   });
}

}  // namespace nn::cpu::NN_VEC_LEVEL

#endif
