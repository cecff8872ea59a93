// The AVX2 form of the direct route of the CPU convolution (DirectConvolution.h): the loops of
// DirectConvolution.cpp in 8-lane registers, of which AVX2 has 16. A tile holds the sums of 16
// output planes (two vectors) at 6 consecutive positions (across rows: groups of 6 rows of 7 or 3
// of 8 or 14 are whole tiles), 12 accumulators beside the tap's two kernel vectors and the
// broadcast input value; the rows after the last group take 2 or 3 tiles each. The weight gradient keeps blocks of 32 output planes (4 vectors) and runs over a
// sample's positions once for each kernel row, the 3 taps of the row x 4 vectors in 12
// accumulators. Each value is summed in the AVX-512 form's order (the forward and gradInput over
// the planes, then the taps, from zero, its bias added last; each weight-gradient sum over the
// positions of each sample in order, the parts' sums in part order), so both forms give the same
// floats, on any thread count.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "nn/core/ComputeThreads.h"
#include "nn/cpu/Avx2.h"
#include "nn/cpu/ConvolutionBias.h"
#include "nn/cpu/DirectConvolutionForms.h"
#include "nn/cpu/DirectConvolutionParts.h"

namespace nn::cpu::avx2 {

#if NN_AVX2

namespace {

using namespace direct;

// Output planes of a forward or gradInput tile: two vectors of 8 lanes.
constexpr int64_t kBlock = 16;
// Positions of a tile at most: 2 x 6 accumulators, two kernel vectors and the broadcast value.
constexpr int kTile = 6;
// Output planes of a weight-gradient block: four vectors.
constexpr int64_t kGradBlock = 32;

// Rows of W positions are tiled in groups of kGroup<W> rows, whose positions (42 of rows of 7 or
// 14, 24 of rows of 8) make whole tiles of 6; the rows after the last group one at a time, each
// in kChunks<W> tiles of nearly equal size (7: 3 + 4, 8: 4 + 4, 14: 4 + 5 + 5).
template <int W>
constexpr int kGroup = W == 7 ? 6 : 3;
template <int W>
constexpr int kChunks = (W + kTile - 1) / kTile;
template <int W>
constexpr int chunkBegin(int j) {
  return j * W / kChunks<W>;
}

// The sums of a tile of N consecutive output positions, from position P of a block of rows of W
// positions, for 16 output planes, of stride S, over KH x KW taps: `in` is the input (rowFloats
// floats a row, `planes` planes planeFloats apart) under the first tap of the block's first
// position, `kernels` the block's [planes][KH KW][16]; each sum, over its planes and taps in order,
// plus its plane's bias (where not null) goes to its plane of `out`, the first output plane at the
// block's first position (planes outPlaneFloats apart). Where `room` (the positions of the plane
// from the tile's first on) is 8 or more, whole vectors are stored, the lanes past the tile to
// positions that later tiles then store (a masked store takes several times as long on Zen 3).
template <int W, int P, int N, int S, int KH, int KW>
NN_AVX2_KERNEL void tileSums(const float* in, int64_t rowFloats, int64_t planes, int64_t planeFloats,
                             const float* kernels, const float* bias, float* out, int64_t outPlaneFloats,
                             int64_t room) {
  static_assert(N >= 1 && N <= kTile, "a tile is 1 to 6 positions");
  __m256 sums[2][N];
#pragma GCC unroll 16
  for (int v = 0; v < 2; ++v)
#pragma GCC unroll 16
    for (int i = 0; i < N; ++i) sums[v][i] = _mm256_setzero_ps();
  for (int64_t c = 0; c < planes; ++c, in += planeFloats, kernels += KH * KW * kBlock)
#pragma GCC unroll 1
    for (int ky = 0; ky < KH; ++ky)
#pragma GCC unroll 1
      for (int kx = 0; kx < KW; ++kx) {
        const float* k = kernels + (KW * ky + kx) * kBlock;
        const __m256 k0 = _mm256_loadu_ps(k), k1 = _mm256_loadu_ps(k + 8);
        const float* corner = in + ky * rowFloats + kx;
#pragma GCC unroll 16
        for (int i = 0; i < N; ++i) {
          const __m256 x = _mm256_broadcast_ss(corner + S * ((P + i) / W * rowFloats + (P + i) % W));
          sums[0][i] = _mm256_fmadd_ps(x, k0, sums[0][i]);
          sums[1][i] = _mm256_fmadd_ps(x, k1, sums[1][i]);
        }
      }
  const __m256i mask = firstLanes8(N);
#pragma GCC unroll 16
  for (int v = 0; v < 2; ++v) {
    __m256 r[8];
#pragma GCC unroll 16
    for (int i = 0; i < 8; ++i) r[i] = i < N ? sums[v][i] : _mm256_setzero_ps();
    transpose8(r);
#pragma GCC unroll 16
    for (int j = 0; j < 8; ++j) {
      const int plane = 8 * v + j;
      const __m256 value = bias ? _mm256_add_ps(_mm256_set1_ps(bias[plane]), r[j]) : r[j];
      if (room >= 8)
        _mm256_storeu_ps(out + plane * outPlaneFloats + P, value);
      else
        _mm256_maskstore_ps(out + plane * outPlaneFloats + P, mask, value);
    }
  }
}

// The tiles of a group of kGroup<W> rows from tile J on; arguments as tileSums's, `in` and `out`
// at the group's first position, `room` the plane's positions from there on.
template <int W, int S, int KH, int KW, int J = 0>
void groupTiles(const float* in, int64_t rowFloats, int64_t planes, int64_t planeFloats, const float* kernels,
                const float* bias, float* out, int64_t outPlaneFloats, int64_t room, Ahead& ahead) {
  if constexpr (J < kGroup<W> * W / kTile) {
    tileSums<W, kTile * J, kTile, S, KH, KW>(in, rowFloats, planes, planeFloats, kernels, bias, out, outPlaneFloats,
                                             room - kTile * J);
    ahead.step();
    groupTiles<W, S, KH, KW, J + 1>(in, rowFloats, planes, planeFloats, kernels, bias, out, outPlaneFloats, room,
                                    ahead);
  }
}

// The tiles of one output row from chunk J on; arguments as groupTiles's.
template <int W, int S, int KH, int KW, int J = 0>
void rowTiles(const float* in, int64_t rowFloats, int64_t planes, int64_t planeFloats, const float* kernels,
              const float* bias, float* out, int64_t outPlaneFloats, int64_t room, Ahead& ahead) {
  if constexpr (J < kChunks<W>) {
    constexpr int begin = chunkBegin<W>(J), n = chunkBegin<W>(J + 1) - begin;
    tileSums<W, begin, n, S, KH, KW>(in, rowFloats, planes, planeFloats, kernels, bias, out, outPlaneFloats,
                                     room - begin);
    ahead.step();
    rowTiles<W, S, KH, KW, J + 1>(in, rowFloats, planes, planeFloats, kernels, bias, out, outPlaneFloats, room, ahead);
  }
}

// The tiles of a block of outHeight rows of W positions.
template <int W>
int64_t tilesOf(int64_t outHeight) {
  return outHeight / kGroup<W> * (kGroup<W> * W / kTile) + outHeight % kGroup<W> * kChunks<W>;
}

// The sums of all outHeight rows of W output positions of one block of 16 output planes;
// arguments as tileSums's, `in` and `out` at the first row; `ahead` steps once a tile (Note [The
// next sample ahead]).
template <int W, int S, int KH, int KW>
void tileRows(const float* in, int64_t rowFloats, int64_t planes, int64_t planeFloats, const float* kernels,
              const float* bias, float* out, int64_t outHeight, int64_t outPlaneFloats, Ahead& ahead) {
  int64_t y = 0;
  for (; y + kGroup<W> <= outHeight; y += kGroup<W>)
    groupTiles<W, S, KH, KW>(in + S * y * rowFloats, rowFloats, planes, planeFloats, kernels, bias, out + y * W,
                             outPlaneFloats, (outHeight - y) * W, ahead);
  for (; y < outHeight; ++y)
    rowTiles<W, S, KH, KW>(in + S * y * rowFloats, rowFloats, planes, planeFloats, kernels, bias, out + y * W,
                           outPlaneFloats, (outHeight - y) * W, ahead);
}

// sums[tap][kGradBlock] += the products, over a sample's output positions (height x width, stride
// S), of the input value each of the K x K taps reaches (`in`: one plane, padded for 3x3 kernels,
// rowFloats floats a row) and the gradOutput of kGradBlock planes there
// (gradients[position][kGradBlock]): one pass over the positions for each kernel row.
template <int S, int K>
NN_AVX2_KERNEL void tapSums(const float* in, int64_t rowFloats, int64_t height, int64_t width,
                            const float* gradients, float* sums) {
  for (int ky = 0; ky < K; ++ky) {
    __m256 acc[K][4];
    float* rowSums = sums + ky * K * kGradBlock;
#pragma GCC unroll 16
    for (int kx = 0; kx < K; ++kx)
#pragma GCC unroll 16
      for (int q = 0; q < 4; ++q) acc[kx][q] = _mm256_loadu_ps(rowSums + kx * kGradBlock + 8 * q);
    const float* g = gradients;
    for (int64_t y = 0; y < height; ++y)
#pragma GCC unroll 1
      for (int64_t x = 0; x < width; ++x, g += kGradBlock) {
        const float* corner = in + S * (y * rowFloats + x) + ky * rowFloats;
        __m256 v[K];
#pragma GCC unroll 16
        for (int kx = 0; kx < K; ++kx) v[kx] = _mm256_broadcast_ss(corner + kx);
#pragma GCC unroll 16
        for (int q = 0; q < 4; ++q) {
          const __m256 gq = _mm256_loadu_ps(g + 8 * q);
#pragma GCC unroll 16
          for (int kx = 0; kx < K; ++kx) acc[kx][q] = _mm256_fmadd_ps(v[kx], gq, acc[kx][q]);
        }
      }
#pragma GCC unroll 16
    for (int kx = 0; kx < K; ++kx)
#pragma GCC unroll 16
      for (int q = 0; q < 4; ++q) _mm256_storeu_ps(rowSums + kx * kGradBlock + 8 * q, acc[kx][q]);
  }
}

// One sample's output ([outPlanes][outHeight][W]) from its input (padded for 3x3 kernels, of
// size K), each value bias (where not null) plus its sum.
template <int W, int S, int K>
void correlateSample(const Correlation& p, const float* input, const float* kernels, const float* bias, float* output,
                     Ahead& ahead) {
  for (int64_t block = 0; block < p.outPlanes / kBlock; ++block)
    tileRows<W, S, K, K>(input, p.rowFloats(), p.inPlanes, p.planeFloats(),
                         kernels + block * p.inPlanes * K * K * kBlock, bias ? bias + block * kBlock : nullptr,
                         output + block * kBlock * p.positions(), p.outHeight, p.positions(), ahead);
}

// The weight gradient's sums of one sample (padded for 3x3 kernels, of size K) and its gradOutput
// ([outPlanes][positions]), added to sums[block][c][tap][kGradBlock]; `gradients` holds
// outPlanes x positions floats.
template <int S, int K>
void sampleTapSums(const Correlation& p, const float* input, const float* gradOutput, float* gradients, float* sums,
                   Ahead& inputAhead, Ahead& gradOutputAhead) {
  const int64_t positions = p.positions();
  // gradients[block][position][kGradBlock] (outPlanes is a multiple of kGradBlock).
  transposeBlocks8<kGradBlock>(gradOutput, p.outPlanes, positions, 0, p.outPlanes / kGradBlock, gradients);
  for (int64_t block = 0; block < p.outPlanes / kGradBlock; ++block)
    for (int64_t c = 0; c < p.inPlanes; ++c) {
      tapSums<S, K>(input + c * p.planeFloats(), p.rowFloats(), p.outHeight, p.outWidth,
                    gradients + block * positions * kGradBlock, sums + (block * p.inPlanes + c) * K * K * kGradBlock);
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
template <int W, int KH, int KW>
void classSums(const Correlation& p, const float* gp, int64_t rowFloats, int64_t planeFloats, const float* kernels,
               float* out, Ahead& ahead) {
  for (int64_t block = 0; block < p.inPlanes / kBlock; ++block)
    tileRows<W, 1, KH, KW>(gp, rowFloats, p.outPlanes, planeFloats, kernels + block * p.outPlanes * KH * KW * kBlock,
                           nullptr, out + block * kBlock * p.positions(), p.outHeight, p.positions(), ahead);
}

// The gradInput of a 3x3 layer of stride 2 for one sample (Note [Stride-2 gradInput],
// DirectConvolution.cpp).
template <int W>
void stridedGradInputSample(const Correlation& p, const float* gradOutput, const float* kernels, float* gp,
                            float* classes, float* gradInput, Ahead& ahead) {
  const int64_t rowFloats = W + 1, planeFloats = (p.outHeight + 1) * rowFloats;
  padGradOutput<W>(p, gradOutput, gp);
  const int64_t classFloats = p.inPlanes * p.positions(), kernelFloats = classKernelFloats(p);
  classSums<W, 1, 1>(p, gp, rowFloats, planeFloats, kernels, classes, ahead);
  classSums<W, 1, 2>(p, gp, rowFloats, planeFloats, kernels + kernelFloats, classes + classFloats, ahead);
  classSums<W, 2, 1>(p, gp, rowFloats, planeFloats, kernels + 2 * kernelFloats, classes + 2 * classFloats, ahead);
  classSums<W, 2, 2>(p, gp, rowFloats, planeFloats, kernels + 3 * kernelFloats, classes + 3 * classFloats, ahead);
  interleaveClasses<W>(p, classes, gradInput);
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
  float* kernels = workspaceFor(device, p, kernelFloats, partFloats, workspace);
  arrangeClassKernels(p, weight, kBlock, kernels);
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
                        (pointwise ? 1 : 4) * (p.inPlanes / kBlock) * tilesOf<W>(p.outHeight));
        if constexpr (pointwise) {
          float* sums = gp + gpFloats;
          classSums<W, 1, 1>(p, g, W, p.positions(), kernels, sums, ahead);
          spreadPointwise<W>(p, sums, gi);
        } else {
          stridedGradInputSample<W>(p, g, kernels, gp, gp + gpFloats, gi, ahead);
        }
      });
    }
  });
}

void directAccGradParameters(const Device& device, const ConvolutionShape& s, const float* input,
                             const float* gradOutput, float* gradWeight, float* gradBias, float scale,
                             Tensor& workspace) {
  const Correlation p{s.batch, s.inPlanes, s.outPlanes, s.height, s.width, s.dW, s.outHeight, s.outWidth, s.kW};
  const int64_t sums = p.outPlanes * p.inPlanes * p.taps();
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
        const int64_t calls = p.outPlanes / kGradBlock * p.inPlanes;
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
  addPartSums(p, parts, sumsOf, kGradBlock, scale, gradWeight);
}

#endif

}  // namespace nn::cpu::avx2
