// The shallow route of the CPU convolution (ShallowConvolution.h). The batch is cut into one part
// per compute thread, each a range of whole samples; a part copies each of its samples with a
// zero border (padded) and works on it in the cache; every sample gets the same floats whatever
// the thread count.
#include "nn/cpu/ShallowConvolution.h"

#include <algorithm>
#include <cstring>

#include "nn/Error.h"
#include "nn/Parallel.h"
#include "nn/cpu/Avx512.h"
#include "nn/cpu/Isa.h"

namespace nn::cpu {

#if NN_AVX512

namespace {

constexpr int kLanes = 16;
// A forward tile's output planes, and its rows: 24 sums of one vector a row or of two.
constexpr int kPlanes = 4;
template <int V>
constexpr int kRows = 6 / V;

// The layer as these loops see it: size x size kernels of stride 1, padding `pad` on every side.
struct Layer {
  int64_t batch, inPlanes, outPlanes, height, width, pad, size, outHeight, outWidth;

  int64_t rowFloats() const { return width + 2 * pad; }
  int64_t planeFloats() const { return (height + 2 * pad) * rowFloats(); }
  // A sample's padded planes, then zeros for the vectors of the last rows, which run past the
  // row's end (into the next row elsewhere) by up to 2 vectors and a kernel's width.
  int64_t paddedFloats() const { return inPlanes * planeFloats() + 2 * kLanes + size; }
  int64_t taps() const { return size * size; }
  int64_t positions() const { return outHeight * outWidth; }
  int vectors() const { return outWidth > kLanes ? 2 : 1; }
  // The lanes of a row's last vector that hold output positions.
  int64_t lastLanes() const { return outWidth - (vectors() - 1) * kLanes; }
};

Layer layerOf(const ConvolutionShape& s) {
  return {s.batch, s.inPlanes, s.outPlanes, s.height, s.width, s.padH, s.kH, s.outHeight, s.outWidth};
}

// Sample `input` ([inPlanes][height][width]) into the interior of `padded`, whose border the
// caller has zeroed.
void pad(const Layer& l, const float* input, float* padded) {
  for (int64_t c = 0; c < l.inPlanes; ++c)
    for (int64_t y = 0; y < l.height; ++y)
      std::memcpy(padded + c * l.planeFloats() + (y + l.pad) * l.rowFloats() + l.pad,
                  input + (c * l.height + y) * l.width, l.width * sizeof(float));
}

// f(K, V), each a std::integral_constant<int>, for the kernel size and the vectors a row of l.
template <typename F>
void byShape(const Layer& l, F f) {
  auto withSize = [&](auto v) {
    if (l.size == 3) return f(std::integral_constant<int, 3>(), v);
    f(std::integral_constant<int, 5>(), v);
  };
  if (l.vectors() == 1) return withSize(std::integral_constant<int, 1>());
  withSize(std::integral_constant<int, 2>());
}

// Output planes [o, o + kPlanes) at R rows from row y, each value its plane's bias (where not
// null) plus its taps' products over the input planes and taps in order: `in` is the padded
// sample at row y, `kernels` the planes' [c][ky][kx][kPlanes], `out` plane o at row y.
// Every loop over the registers' arrays is unrolled whole, which keeps them in registers (GCC 12
// at -O2 leaves some of these loops rolled and the arrays on the stack: 3 times slower).
template <int K, int V, int R>
NN_AVX512_KERNEL void forwardTile(const Layer& l, const float* in, const float* kernels, const float* bias,
                                  float* out) {
  const int64_t rowFloats = l.rowFloats(), planeFloats = l.planeFloats();
  __m512 sums[kPlanes][R][V];
#pragma GCC unroll 32
  for (int g = 0; g < kPlanes; ++g) {
    const __m512 b = _mm512_set1_ps(bias ? bias[g] : 0.f);
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
        __m512 x[R][V];
#pragma GCC unroll 32
        for (int r = 0; r < R; ++r)
#pragma GCC unroll 32
          for (int v = 0; v < V; ++v) x[r][v] = _mm512_loadu_ps(in + (r + ky) * rowFloats + kx + kLanes * v);
#pragma GCC unroll 32
        for (int g = 0; g < kPlanes; ++g) {
          const __m512 w = _mm512_set1_ps(kernels[g]);
#pragma GCC unroll 32
          for (int r = 0; r < R; ++r)
#pragma GCC unroll 32
            for (int v = 0; v < V; ++v) sums[g][r][v] = _mm512_fmadd_ps(x[r][v], w, sums[g][r][v]);
        }
      }
  const __mmask16 last = firstLanes(l.lastLanes());
#pragma GCC unroll 32
  for (int g = 0; g < kPlanes; ++g)
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 32
      for (int v = 0; v < V; ++v) {
        float* dst = out + g * l.positions() + r * l.outWidth + kLanes * v;
        if (v == V - 1)
          _mm512_mask_storeu_ps(dst, last, sums[g][r][v]);
        else
          _mm512_storeu_ps(dst, sums[g][r][v]);
      }
}

// One sample's output ([outPlanes][outHeight][outWidth]) from its padded copy.
template <int K, int V>
void forwardSample(const Layer& l, const float* padded, const float* kernels, const float* bias, float* output) {
  constexpr int R = kRows<V>;
  const int64_t kernelFloats = l.inPlanes * K * K * kPlanes;
  for (int64_t o = 0; o < l.outPlanes; o += kPlanes, kernels += kernelFloats) {
    const float* b = bias ? bias + o : nullptr;
    float* out = output + o * l.positions();
    for (int64_t y = 0; y < l.outHeight;) {
      const float* in = padded + y * l.rowFloats();
      if (l.outHeight - y >= R) {
        forwardTile<K, V, R>(l, in, kernels, b, out + y * l.outWidth);
        y += R;
      } else {
        forwardTile<K, V, 1>(l, in, kernels, b, out + y * l.outWidth);
        y += 1;
      }
    }
  }
}

}  // namespace

bool shallowFits(const ConvolutionShape& s) {
  const bool shape = s.inPlanes >= 1 && s.inPlanes <= 4 && s.kH == s.kW && (s.kH == 3 || s.kH == 5) && s.dH == 1 &&
                     s.dW == 1 && s.dilH == 1 && s.dilW == 1 && s.padH == s.padW && s.padH >= 0 && s.padH < s.kH;
  return isaAtLeast(Isa::avx512) && shape && s.outWidth >= 1 && s.outWidth <= 2 * kLanes && s.outPlanes % kPlanes == 0;
}

void shallowUpdateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                         const float* bias, float* output, Tensor& workspace) {
  const Layer l = layerOf(s);
  const int parts = parallelParts(device, l.batch);
  const int64_t taps = l.taps(), kernelFloats = l.outPlanes * l.inPlanes * taps;
  workspace.resize_({kernelFloats + parts * l.paddedFloats()}, device);
  float* kernels = workspace.data();
  // kernels[o / kPlanes][c][tap][o % kPlanes]
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
      byShape(l, [&](auto k, auto v) {
        forwardSample<decltype(k)::value, decltype(v)::value>(l, padded, kernels, bias, output + n * outFloats);
      });
    }
  });
}

#else

bool shallowFits(const ConvolutionShape&) { return false; }

void shallowUpdateOutput(const Device&, const ConvolutionShape&, const float*, const float*, const float*, float*,
                         Tensor&) {
  NN_CHECK(false, "nn.SpatialConvolution: the shallow route is not in this build");
}

#endif

}  // namespace nn::cpu
