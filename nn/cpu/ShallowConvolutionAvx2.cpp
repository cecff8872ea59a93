// The AVX2 form of the shallow route of the CPU convolution (ShallowConvolution.h): the lanes run
// along an output row as in ShallowConvolution.cpp, 8 positions a vector, up to 4 vectors a row of
// 32. A tile holds the sums of 4 output planes x kRows rows at one vector of the row (12 sums, the
// rows' 3 input vectors and a broadcast weight: all 16 registers), each input vector loaded once
// for the 4 planes and each weight broadcast once for the tile's rows. Each value is its plane's
// bias plus its taps' products over the input planes and taps in order, as in the AVX-512 form:
// the same floats at either level.
#include <type_traits>

#include "nn/cpu/Avx2.h"
#include "nn/cpu/DirectConvolutionForms.h"
#include "nn/cpu/ShallowConvolutionParts.h"

namespace nn::cpu::avx2 {

#if NN_AVX2

namespace {

using namespace shallow;

constexpr int kLanes = 8;
constexpr int kRows = 3;

// Output planes [o, o + kPlanes) at R rows from row y, at the positions of vector u of each row
// (the lanes of `mask`): `in` is the padded sample at row y, column 8 u; `kernels` the planes'
// [c][ky][kx][kPlanes], `out` plane o at row y, position 8 u; `full`: all 8 lanes are positions
// of the row, stored whole (a masked store takes several times as long on Zen 3).
template <int K, int R>
NN_AVX2_KERNEL void forwardTile(const Layer& l, const float* in, const float* kernels, const float* bias, float* out,
                                __m256i mask, bool full) {
  const int64_t rowFloats = l.rowFloats(), planeFloats = l.planeFloats();
  __m256 sums[kPlanes][R];
#pragma GCC unroll 16
  for (int g = 0; g < kPlanes; ++g) {
    const __m256 b = _mm256_set1_ps(bias ? bias[g] : 0.f);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) sums[g][r] = b;
  }
  for (int64_t c = 0; c < l.inPlanes; ++c, in += planeFloats)
#pragma GCC unroll 1
    for (int ky = 0; ky < K; ++ky)
#pragma GCC unroll 1
      for (int kx = 0; kx < K; ++kx, kernels += kPlanes) {
        __m256 x[R];
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) x[r] = _mm256_loadu_ps(in + (r + ky) * rowFloats + kx);
#pragma GCC unroll 16
        for (int g = 0; g < kPlanes; ++g) {
          const __m256 w = _mm256_broadcast_ss(kernels + g);
#pragma GCC unroll 16
          for (int r = 0; r < R; ++r) sums[g][r] = _mm256_fmadd_ps(x[r], w, sums[g][r]);
        }
      }
#pragma GCC unroll 16
  for (int g = 0; g < kPlanes; ++g)
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      float* dst = out + g * l.positions() + r * l.outWidth;
      if (full)
        _mm256_storeu_ps(dst, sums[g][r]);
      else
        _mm256_maskstore_ps(dst, mask, sums[g][r]);
    }
}

// One sample's output ([outPlanes][outHeight][outWidth]) from its padded copy.
template <int K>
void forwardSample(const Layer& l, const float* padded, const float* kernels, const float* bias, float* output) {
  const int64_t kernelFloats = l.inPlanes * K * K * kPlanes;
  const int64_t vectors = (l.outWidth + kLanes - 1) / kLanes;
  for (int64_t o = 0; o < l.outPlanes; o += kPlanes, kernels += kernelFloats) {
    const float* b = bias ? bias + o : nullptr;
    float* out = output + o * l.positions();
    for (int64_t u = 0; u < vectors; ++u) {
      const __m256i mask = firstLanes8(l.outWidth - kLanes * u);
      const bool full = l.outWidth - kLanes * u >= kLanes;
      for (int64_t y = 0; y < l.outHeight;) {
        const float* in = padded + y * l.rowFloats() + kLanes * u;
        float* dst = out + y * l.outWidth + kLanes * u;
        if (l.outHeight - y >= kRows) {
          forwardTile<K, kRows>(l, in, kernels, b, dst, mask, full);
          y += kRows;
        } else {
          forwardTile<K, 1>(l, in, kernels, b, dst, mask, full);
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
                     if (l.size == 3)
                       forwardSample<3>(l, padded, kernels, b, out);
                     else
                       forwardSample<5>(l, padded, kernels, b, out);
                   });
}

#endif

}  // namespace nn::cpu::avx2
