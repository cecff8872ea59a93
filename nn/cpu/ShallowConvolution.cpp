// The shallow route of the CPU convolution (ShallowConvolution.h). The batch is cut into one part
// per compute thread, each a range of whole samples; a part copies each of its samples with a
// zero border (padded) and works on it in the cache; every sample gets the same floats whatever
// the thread count.
#include "nn/cpu/ShallowConvolution.h"

#include <algorithm>
#include <cstring>

#include "nn/core/ComputeThreads.h"
#include "nn/core/Error.h"
#include "nn/cpu/Avx2.h"
#include "nn/cpu/Avx512.h"
#include "nn/cpu/DirectConvolutionForms.h"
#include "nn/cpu/Isa.h"
#include "nn/cpu/ShallowConvolutionParts.h"

namespace nn::cpu {

#if NN_AVX512

namespace avx512 {

namespace {

using namespace shallow;

constexpr int kLanes = 16;
// A forward tile's rows: 4 planes x 6 / V rows x V vectors, 24 sums of one vector a row or of two.
template <int V>
constexpr int kRows = 6 / V;

// The vectors of an output row, and the lanes of its last vector that hold output positions.
int vectorsOf(const Layer& l) { return l.outWidth > kLanes ? 2 : 1; }
int64_t lastLanes(const Layer& l) { return l.outWidth - (vectorsOf(l) - 1) * kLanes; }

// f(K, V), each a std::integral_constant<int>, for the kernel size and the vectors a row of l.
template <typename F>
void byShape(const Layer& l, F f) {
  auto withSize = [&](auto v) {
    if (l.size == 3) return f(std::integral_constant<int, 3>(), v);
    f(std::integral_constant<int, 5>(), v);
  };
  if (vectorsOf(l) == 1) return withSize(std::integral_constant<int, 1>());
  withSize(std::integral_constant<int, 2>());
}

// Output planes [o, o + kPlanes) at R rows from row y, each value its plane's bias (where not
// null) plus its taps' products over the input planes and taps in order: `in` is the padded
// sample at row y, `kernels` the planes' [c][ky][kx][kPlanes], `out` plane o at row y.
// Every loop over the registers' arrays is unrolled whole, which keeps them in registers (GCC 12
// at -O2 leaves some of these loops rolled and the arrays on the stack).
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
  const __mmask16 last = firstLanes(lastLanes(l));
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

void shallowUpdateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                         const float* bias, float* output, Tensor& workspace) {
  shallow::forward(device, s, input, weight, bias, output, workspace,
                   [](const Layer& l, const float* padded, const float* kernels, const float* b, float* out) {
                     byShape(l, [&](auto k, auto v) {
                       forwardSample<decltype(k)::value, decltype(v)::value>(l, padded, kernels, b, out);
                     });
                   });
}

}  // namespace avx512

#endif

bool shallowFits(const ConvolutionShape& s) {
  const bool shape = s.inPlanes >= 1 && s.inPlanes <= 4 && s.kH == s.kW && (s.kH == 3 || s.kH == 5) && s.dH == 1 &&
                     s.dW == 1 && s.dilH == 1 && s.dilW == 1 && s.groups == 1 && s.padH == s.padW && s.padH >= 0 &&
                     s.padH < s.kH;
  return isaAtLeast(Isa::avx2) && shape && s.outWidth >= 1 && s.outWidth <= 32 && s.outPlanes % shallow::kPlanes == 0;
}

#if NN_AVX2

void shallowUpdateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                         const float* bias, float* output, Tensor& workspace) {
  // The form of the kernels' level: avx512's where it runs, else avx2's; shallowFits keeps every
  // call off machines with neither.
#if NN_AVX512
  if (isaAtLeast(Isa::avx512)) return avx512::shallowUpdateOutput(device, s, input, weight, bias, output, workspace);
#endif
  avx2::shallowUpdateOutput(device, s, input, weight, bias, output, workspace);
}

#else

void shallowUpdateOutput(const Device&, const ConvolutionShape&, const float*, const float*, const float*, float*,
                         Tensor&) {
  NN_CHECK(false, "nn.SpatialConvolution: the shallow route is not in this build");
}

#endif

}  // namespace nn::cpu
