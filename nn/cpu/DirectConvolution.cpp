// The direct route of the CPU convolution (DirectConvolution.h). The batch is cut into one part
// per compute thread, each part a range of whole samples; for a 3x3 layer a part copies each of
// its samples with a zero border (padded) and works on it in the cache, a 1x1 layer's it reads
// where it is. The forward and the gradInput give every sample the same floats whatever the
// thread count; the weight gradient is summed per part and the parts' sums added in part order.
#include "nn/cpu/DirectConvolution.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "nn/core/ComputeThreads.h"
#include "nn/core/Error.h"
#include "nn/cpu/Avx2.h"
#include "nn/cpu/Avx512.h"
#include "nn/cpu/ConvolutionBias.h"
#include "nn/cpu/DirectConvolutionForms.h"
#include "nn/cpu/DirectConvolutionParts.h"
#include "nn/cpu/Isa.h"
#include "nn/cpu/Multiversion.h"

namespace nn::cpu {

#if NN_AVX512

namespace avx512 {

namespace {

using namespace direct;

// Output planes of a tile: two vectors of 16 lanes.
constexpr int64_t kBlock = 32;
// Positions of a tile at most: 2 x 14 accumulators, the two kernel vectors of a tap and the
// broadcast input value take 31 of the 32 vector registers.
constexpr int kTile = 14;

// The sums of 16 planes at `positions` consecutive positions (sums[position], a lane a plane)
// into the planes: plane j's at out + j * planeFloats, each plus bias[j] where bias is not null.
template <int positions>
NN_AVX512_KERNEL inline void storePlanes(const __m512* sums, const float* bias, float* out, int64_t planeFloats) {
  __m512 r[16];
  for (int i = 0; i < 16; ++i) r[i] = i < positions ? sums[i] : _mm512_setzero_ps();
  transpose16(r);
  const __mmask16 mask = firstLanes(positions);
  for (int j = 0; j < 16; ++j)
    _mm512_mask_storeu_ps(out + j * planeFloats, mask, bias ? _mm512_add_ps(_mm512_set1_ps(bias[j]), r[j]) : r[j]);
}

// The sums of a tile of R (1 or 2) output rows of W positions for 16 V output planes, of stride S,
// over KH x KW taps: `in` is the input (rowFloats floats a row, `planes` planes planeFloats apart)
// under the tile's first tap, `kernels` the block's [planes][KH KW][16 V]; each sum, over its
// planes and taps in order, plus its plane's bias (where not null) goes to its plane of `out`,
// the block's first output plane at the tile's first position (planes outPlaneFloats apart).
template <int W, int S, int R, int KH, int KW, int V>
NN_AVX512_KERNEL void tileSums(const float* in, int64_t rowFloats, int64_t planes, int64_t planeFloats,
                               const float* kernels, const float* bias, float* out, int64_t outPlaneFloats) {
  static_assert(R == 1 || R == 2, "a tile is one row or two");
  constexpr int positions = W * R, lanes = 16 * V;
  __m512 sums[V][positions];
  for (int v = 0; v < V; ++v)
    for (int i = 0; i < positions; ++i) sums[v][i] = _mm512_setzero_ps();
  for (int64_t c = 0; c < planes; ++c, in += planeFloats, kernels += KH * KW * lanes)
#pragma GCC unroll 1
    for (int ky = 0; ky < KH; ++ky)
#pragma GCC unroll 1
      for (int kx = 0; kx < KW; ++kx) {
        const float* k = kernels + (KW * ky + kx) * lanes;
        __m512 kv[V];
        for (int v = 0; v < V; ++v) kv[v] = _mm512_loadu_ps(k + 16 * v);
        const float* corner = in + ky * rowFloats + kx;
#pragma GCC unroll 28
        for (int i = 0; i < positions; ++i) {
          // One offset from `corner` for both rows: GCC 12 under -fsanitize=shift or
          // signed-integer-overflow read the second row wrongly when it chose between two row
          // pointers here (tests/convolution_direct_test.cpp under --config=asan).
          const __m512 x = _mm512_set1_ps(corner[S * (i / W * rowFloats + i % W)]);
          for (int v = 0; v < V; ++v) sums[v][i] = _mm512_fmadd_ps(x, kv[v], sums[v][i]);
        }
      }
  for (int v = 0; v < V; ++v)
    storePlanes<positions>(sums[v], bias ? bias + 16 * v : nullptr, out + 16 * v * outPlaneFloats, outPlaneFloats);
}

// The tiles of a block of outHeight rows of W positions, as tileRows cuts them: whole tiles of
// kTile / W rows, then one-row ones.
template <int W>
int64_t tilesOf(int64_t outHeight) {
  constexpr int R = kTile / W;
  return outHeight / R + outHeight % R;
}

// The sums of all outHeight rows of W output positions of one block of 16 V output planes,
// tiled as tileSums wants; arguments as tileSums's, `in` and `out` at the first row; `ahead`
// steps once a tile (Note [The next sample ahead]).
template <int W, int S, int KH, int KW, int V>
void tileRows(const float* in, int64_t rowFloats, int64_t planes, int64_t planeFloats, const float* kernels,
              const float* bias, float* out, int64_t outHeight, int64_t outPlaneFloats, Ahead& ahead) {
  constexpr int R = kTile / W;
  for (int64_t y = 0; y < outHeight; ahead.step()) {
    const float* rowIn = in + S * y * rowFloats;
    float* rowOut = out + y * W;
    if (outHeight - y >= R) {
      tileSums<W, S, R, KH, KW, V>(rowIn, rowFloats, planes, planeFloats, kernels, bias, rowOut, outPlaneFloats);
      y += R;
    } else {
      tileSums<W, S, 1, KH, KW, V>(rowIn, rowFloats, planes, planeFloats, kernels, bias, rowOut, outPlaneFloats);
      y += 1;
    }
  }
}

// sums[tap][kBlock] += the products, over a sample's output positions (height x width, stride S),
// of the input value each of the K x K taps reaches (`in`: one plane, padded for 3x3 kernels,
// rowFloats floats a row) and the gradOutput of kBlock planes there (gradients[position][kBlock]).
template <int S, int K>
NN_AVX512_KERNEL void tapSums(const float* in, int64_t rowFloats, int64_t height, int64_t width, const float* gradients,
                              float* sums) {
  constexpr int taps = K * K;
  __m512 low[taps], high[taps];
  for (int t = 0; t < taps; ++t) {
    low[t] = _mm512_loadu_ps(sums + t * kBlock);
    high[t] = _mm512_loadu_ps(sums + t * kBlock + 16);
  }
  for (int64_t y = 0; y < height; ++y)
#pragma GCC unroll 1
    for (int64_t x = 0; x < width; ++x, gradients += kBlock) {
      const __m512 g0 = _mm512_loadu_ps(gradients), g1 = _mm512_loadu_ps(gradients + 16);
      const float* corner = in + S * (y * rowFloats + x);
#pragma GCC unroll 9
      for (int t = 0; t < taps; ++t) {
        const __m512 v = _mm512_set1_ps(corner[t / K * rowFloats + t % K]);
        low[t] = _mm512_fmadd_ps(v, g0, low[t]);
        high[t] = _mm512_fmadd_ps(v, g1, high[t]);
      }
    }
  for (int t = 0; t < taps; ++t) {
    _mm512_storeu_ps(sums + t * kBlock, low[t]);
    _mm512_storeu_ps(sums + t * kBlock + 16, high[t]);
  }
}

// One sample's output ([outPlanes][outHeight][W]) from its input (padded for 3x3 kernels, of
// size K), each value bias (where not null) plus its sum.
template <int W, int S, int K>
void correlateSample(const Correlation& p, const float* input, const float* kernels, const float* bias, float* output,
                     Ahead& ahead) {
  for (int64_t block = 0; block < p.outPlanes / kBlock; ++block)
    tileRows<W, S, K, K, 2>(input, p.rowFloats(), p.inPlanes, p.planeFloats(),
                            kernels + block * p.inPlanes * K * K * kBlock, bias ? bias + block * kBlock : nullptr,
                            output + block * kBlock * p.positions(), p.outHeight, p.positions(), ahead);
}

// The weight gradient's sums of one sample (padded for 3x3 kernels, of size K) and its gradOutput
// ([outPlanes][positions]), added to sums[block][c][tap][kBlock]; `gradients` holds
// outPlanes x positions floats.
template <int S, int K>
void sampleTapSums(const Correlation& p, const float* input, const float* gradOutput, float* gradients, float* sums,
                   Ahead& inputAhead, Ahead& gradOutputAhead) {
  const int64_t positions = p.positions();
  // gradients[block][position][kBlock] (outPlanes is a multiple of kBlock).
  transposeBlocks<kBlock>(gradOutput, p.outPlanes, positions, 0, p.outPlanes / kBlock, gradients);
  for (int64_t block = 0; block < p.outPlanes / kBlock; ++block)
    for (int64_t c = 0; c < p.inPlanes; ++c) {
      tapSums<S, K>(input + c * p.planeFloats(), p.rowFloats(), p.outHeight, p.outWidth,
                    gradients + block * positions * kBlock, sums + (block * p.inPlanes + c) * K * K * kBlock);
      inputAhead.step();
      gradOutputAhead.step();
    }
}

// output = bias + the correlation of input with the kernels arranged in kernels.
void correlate(const Device& device, const Correlation& p, const float* input, const float* kernels, const float* bias,
               float* output, float* workspace) {
  const int parts = partsOf(device, p);
  const int64_t partFloats = p.paddedFloats();
  parallelFor(device, parts, [&](int part) {
    float* padded = workspace + part * partFloats;
    std::fill(padded, padded + p.paddedFloats(), 0.f);
    const Range samples = partRange(p.batch, parts, part);
    const int64_t inFloats = p.inPlanes * p.inPositions(), outFloats = p.outPlanes * p.positions();
    for (int64_t n = samples.begin; n < samples.end; ++n) {
      float* out = output + n * outFloats;
      byShape(p, [&](auto w, auto stride, auto size) {
        constexpr int W = decltype(w)::value, S = decltype(stride)::value, K = decltype(size)::value;
        Ahead ahead;  // Note [The next sample ahead]
        if (n + 1 < samples.end)
          ahead = Ahead(input + (n + 1) * inFloats, inFloats, out + outFloats, outFloats,
                        p.outPlanes / kBlock * tilesOf<W>(p.outHeight));
        correlateSample<W, S, K>(p, sampleInput<W, S, K>(p, input, n, padded), kernels, bias, out, ahead);
      });
    }
  });
}

// The sums of class (1 + py = KH, 1 + px = KW) of a sample into out ([inPlanes][outHeight][W]),
// from its gradOutput gp (rowFloats floats a row, planes planeFloats apart).
template <int W, int V, int KH, int KW>
void classSums(const Correlation& p, const float* gp, int64_t rowFloats, int64_t planeFloats, const float* kernels,
               float* out, Ahead& ahead) {
  constexpr int lanes = 16 * V;
  for (int64_t block = 0; block < p.inPlanes / lanes; ++block)
    tileRows<W, 1, KH, KW, V>(gp, rowFloats, p.outPlanes, planeFloats, kernels + block * p.outPlanes * KH * KW * lanes,
                              nullptr, out + block * lanes * p.positions(), p.outHeight, p.positions(), ahead);
}

// Note [Stride-2 gradInput]
// Input position (2a + py, 2b + px) of a 3x3 layer of stride 2 and padding 1 takes gradOutput
// (a, b) through tap (1, 1) where py = px = 0; where py is 1, also gradOutput (a + 1, .) through
// kernel row 0, its row 2 then serving (a, .); the same for columns. Each of the four parity
// classes is thus a correlation of stride 1 of gradOutput (a zero row and column appended) with
// kernels of 1 x 1, 1 x 2, 2 x 1 or 2 x 2 taps, over the input planes 16 or 32 at a time: the
// 9 taps' multiply-adds in all, none with a zero; the classes' sums are then interleaved into
// the rows of gradInput.
template <int W, int V>
void stridedGradInputSample(const Correlation& p, const float* gradOutput, const float* kernels, float* gp,
                            float* classes, float* gradInput, Ahead& ahead) {
  const int64_t rowFloats = W + 1, planeFloats = (p.outHeight + 1) * rowFloats, positions = p.positions();
  padGradOutput<W>(p, gradOutput, gp);
  const int64_t classFloats = p.inPlanes * positions;
  classSums<W, V, 1, 1>(p, gp, rowFloats, planeFloats, kernels, classes, ahead);
  classSums<W, V, 1, 2>(p, gp, rowFloats, planeFloats, kernels + classKernelFloats(p), classes + classFloats, ahead);
  classSums<W, V, 2, 1>(p, gp, rowFloats, planeFloats, kernels + 2 * classKernelFloats(p), classes + 2 * classFloats,
                        ahead);
  classSums<W, V, 2, 2>(p, gp, rowFloats, planeFloats, kernels + 3 * classKernelFloats(p), classes + 3 * classFloats,
                        ahead);
  interleaveClasses<W>(p, classes, gradInput);
}

// The gradInput of a 1x1 layer of stride 2 for one sample: class (0, 0)'s sums, the products of
// gradOutput with the kernels, at the even positions of the even rows; zeros elsewhere.
template <int W, int V>
void pointwiseGradInputSample(const Correlation& p, const float* gradOutput, const float* kernels, float* sums,
                              float* gradInput, Ahead& ahead) {
  const int64_t positions = p.positions();
  classSums<W, V, 1, 1>(p, gradOutput, W, positions, kernels, sums, ahead);
  spreadPointwise<W>(p, sums, gradInput);
}

}  // namespace

void directUpdateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                        const float* bias, float* output, Tensor& workspace) {
  const Correlation p{s.batch, s.inPlanes, s.outPlanes, s.height, s.width, s.dW, s.outHeight, s.outWidth, s.kW};
  const int64_t kernelFloats = p.outPlanes * p.inPlanes * p.taps();
  float* kernels = workspaceFor(device, p, kernelFloats, p.paddedFloats(), workspace);
  arrangeKernels(p, weight, false, kBlock, kernels);
  correlate(device, p, input, kernels, bias, output, kernels + kernelFloats);
}

void directUpdateGradInput(const Device& device, const ConvolutionShape& s, const float* gradOutput,
                           const float* weight, float* gradInput, Tensor& workspace) {
  if (s.dW == 1) {
    const Correlation p{s.batch, s.outPlanes, s.inPlanes, s.height, s.width, 1, s.height, s.width};
    const int64_t kernelFloats = p.outPlanes * p.inPlanes * p.taps();
    float* kernels = workspaceFor(device, p, kernelFloats, p.paddedFloats(), workspace);
    arrangeKernels(p, weight, true, kBlock, kernels);
    correlate(device, p, gradOutput, kernels, nullptr, gradInput, kernels + kernelFloats);
    return;
  }
  const Correlation p{s.batch, s.inPlanes, s.outPlanes, s.height, s.width, 2, s.outHeight, s.outWidth, s.kW};
  const int64_t kernelFloats = 4 * classKernelFloats(p);
  // A part's padded gradOutput (3x3 layers), then its classes' sums.
  const int64_t gpFloats = p.padded() ? p.outPlanes * (p.outHeight + 1) * (p.outWidth + 1) : 0;
  const int64_t partFloats = gpFloats + p.inPlanes * p.inPositions();
  const int V = p.inPlanes % kBlock == 0 ? 2 : 1;
  float* kernels = workspaceFor(device, p, kernelFloats, partFloats, workspace);
  arrangeClassKernels(p, weight, 16 * V, kernels);
  const int parts = partsOf(device, p);
  parallelFor(device, parts, [&](int part) {
    float* gp = kernels + kernelFloats + part * partFloats;
    std::fill(gp, gp + gpFloats, 0.f);
    const Range samples = partRange(p.batch, parts, part);
    const int64_t gFloats = p.outPlanes * p.positions(), giFloats = p.inPlanes * p.inPositions();
    for (int64_t n = samples.begin; n < samples.end; ++n) {
      const float* g = gradOutput + n * gFloats;
      float* gi = gradInput + n * giFloats;
      byShape(p, [&](auto w, auto, auto size) {
        constexpr int W = decltype(w)::value;
        constexpr bool pointwise = decltype(size)::value == 1;
        Ahead ahead;  // Note [The next sample ahead]
        if (n + 1 < samples.end)
          ahead = Ahead(g + gFloats, gFloats, gi + giFloats, giFloats,
                        (pointwise ? 1 : 4) * (p.inPlanes / (16 * V)) * tilesOf<W>(p.outHeight));
        if constexpr (pointwise) {
          if (V == 2)
            pointwiseGradInputSample<W, 2>(p, g, kernels, gp + gpFloats, gi, ahead);
          else
            pointwiseGradInputSample<W, 1>(p, g, kernels, gp + gpFloats, gi, ahead);
        } else if (V == 2) {
          stridedGradInputSample<W, 2>(p, g, kernels, gp, gp + gpFloats, gi, ahead);
        } else {
          stridedGradInputSample<W, 1>(p, g, kernels, gp, gp + gpFloats, gi, ahead);
        }
      });
    }
  });
}

void directAccGradParameters(const Device& device, const ConvolutionShape& s, const float* input,
                             const float* gradOutput, float* gradWeight, float* gradBias, float scale,
                             Tensor& workspace) {
  const Correlation p{s.batch, s.inPlanes, s.outPlanes, s.height, s.width, s.dW, s.outHeight, s.outWidth, s.kW};
  const int64_t taps = p.taps(), sums = p.outPlanes * p.inPlanes * taps;
  // The samples' plane sums of gradOutput (the bias gradient's), then for each part its padded
  // sample, its gradOutput arranged by blocks of planes, and its sums.
  const int64_t biasFloats = gradBias ? p.batch * p.outPlanes : 0;
  const int64_t partFloats = p.paddedFloats() + p.outPlanes * p.positions() + sums;
  const int parts = partsOf(device, p);
  float* planeSums = workspaceFor(device, p, biasFloats, partFloats, workspace);
  float* base = planeSums + biasFloats;
  auto sumsOf = [&](int part) { return base + part * partFloats + p.paddedFloats() + p.outPlanes * p.positions(); };
  parallelFor(device, parts, [&](int part) {
    float* padded = base + part * partFloats;
    std::fill(padded, padded + p.paddedFloats(), 0.f);
    std::fill(sumsOf(part), sumsOf(part) + sums, 0.f);
    const Range samples = partRange(p.batch, parts, part);
    const int64_t inFloats = p.inPlanes * p.inPositions(), gFloats = p.outPlanes * p.positions();
    for (int64_t n = samples.begin; n < samples.end; ++n) {
      const float* g = gradOutput + n * gFloats;
      float* gradients = padded + p.paddedFloats();
      Ahead inputAhead, gradOutputAhead;  // Note [The next sample ahead]
      if (n + 1 < samples.end) {
        const int64_t calls = p.outPlanes / kBlock * p.inPlanes;
        inputAhead = Ahead(input + (n + 1) * inFloats, inFloats, nullptr, 0, calls);
        gradOutputAhead = Ahead(g + gFloats, gFloats, nullptr, 0, calls);
      }
      if (!narrow(p.outWidth)) {  // a 3x3 layer of stride 1 on wider planes
        pad<0>(p, input + n * inFloats, padded);
        sampleTapSums<1, 3>(p, padded, g, gradients, sumsOf(part), inputAhead, gradOutputAhead);
      } else {
        byShape(p, [&](auto w, auto stride, auto size) {
          constexpr int W = decltype(w)::value, S = decltype(stride)::value, K = decltype(size)::value;
          sampleTapSums<S, K>(p, sampleInput<W, S, K>(p, input, n, padded), g, gradients, sumsOf(part), inputAhead,
                              gradOutputAhead);
        });
      }
      if (gradBias) samplePlaneSums(g, p.outPlanes, p.positions(), planeSums + n * p.outPlanes);
    }
  });
  if (gradBias) addPlaneSums(planeSums, p.batch, p.outPlanes, scale, gradBias);
  addPartSums(p, parts, sumsOf, kBlock, scale, gradWeight);
}

}  // namespace avx512

#endif

// Output planes a multiple of 32: the AVX-512 form's blocks (the AVX2 form's, 16, divide them).
constexpr int64_t kOutPlanes = 32;

bool directFits(const ConvolutionShape& s) {
  const bool square3 = s.kH == 3 && s.kW == 3 && s.padH == 1 && s.padW == 1 && (s.dW == 1 || s.dW == 2);
  const bool pointwise = s.kH == 1 && s.kW == 1 && s.padH == 0 && s.padW == 0 && s.dW == 2;
  return isaAtLeast(Isa::avx2) && (square3 || pointwise) && s.dH == s.dW && s.dilH == 1 && s.dilW == 1 &&
         s.groups == 1 && s.outPlanes % kOutPlanes == 0 && direct::narrow(s.outWidth) && s.width == s.dW * s.outWidth;
}

bool directWeightGradientFits(const ConvolutionShape& s) {
  // On wider planes from 16 input planes up, where it beats Winograd's weight gradient (a first
  // layer of 3 planes runs faster unfolded). At the level avx512 only: the AVX2 form of these
  // wider planes is not measured against Winograd's at AVX2 yet.
  return directFits(s) ||
         (isaAtLeast(Isa::avx512) && s.kH == 3 && s.kW == 3 && s.padH == 1 && s.padW == 1 && s.dH == 1 && s.dW == 1 &&
          s.dilH == 1 && s.dilW == 1 && s.groups == 1 && s.outPlanes % kOutPlanes == 0 && s.inPlanes >= 16);
}

bool directGradInputFits(const ConvolutionShape& s) {
  if (!directFits(s)) return false;
  if (s.dW == 1) return s.inPlanes % kOutPlanes == 0;
  return s.inPlanes % 16 == 0 && s.height == 2 * s.outHeight;
}

#if NN_AVX2

void directUpdateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                        const float* bias, float* output, Tensor& workspace) {
  NN_CPU_FORM(directUpdateOutput(device, s, input, weight, bias, output, workspace));
}

void directUpdateGradInput(const Device& device, const ConvolutionShape& s, const float* gradOutput,
                           const float* weight, float* gradInput, Tensor& workspace) {
  NN_CPU_FORM(directUpdateGradInput(device, s, gradOutput, weight, gradInput, workspace));
}

void directAccGradParameters(const Device& device, const ConvolutionShape& s, const float* input,
                             const float* gradOutput, float* gradWeight, float* gradBias, float scale,
                             Tensor& workspace) {
  NN_CPU_FORM(directAccGradParameters(device, s, input, gradOutput, gradWeight, gradBias, scale, workspace));
}

#else

void directUpdateOutput(const Device&, const ConvolutionShape&, const float*, const float*, const float*, float*,
                        Tensor&) {
  NN_CHECK(false, "nn.SpatialConvolution: the direct route is not in this build");
}
void directUpdateGradInput(const Device&, const ConvolutionShape&, const float*, const float*, float*, Tensor&) {
  NN_CHECK(false, "nn.SpatialConvolution: the direct route is not in this build");
}
void directAccGradParameters(const Device&, const ConvolutionShape&, const float*, const float*, float*, float*, float,
                             Tensor&) {
  NN_CHECK(false, "nn.SpatialConvolution: the direct route is not in this build");
}

#endif

}  // namespace nn::cpu
