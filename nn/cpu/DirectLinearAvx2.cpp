// The AVX2 forms of the direct and narrow routes of the CPU Linear (DirectLinear.h): the tiles of
// Note [Linear tiles] and the loops of Note [Narrow layers] (DirectLinear.cpp) in 8-lane registers,
// of which AVX2 has 16, so the tiles are smaller, but each sum runs in the same order as in the
// AVX-512 forms: the same floats at either level.
#include <algorithm>
#include <array>
#include <utility>

#include "nn/core/ComputeThreads.h"
#include "nn/core/Error.h"
#include "nn/cpu/Avx2.h"
#include "nn/cpu/DirectLinearForms.h"

namespace nn::cpu::avx2 {

#if NN_AVX2

namespace {

// The forward's tile: 6 weight rows x 16 samples (2 vectors), 12 sums; the gradInput's: 6
// samples x 16 inputs, each weight strip of 256 rows copied 16 inputs wide.
constexpr int64_t kTileRows = 6;
constexpr int64_t kTileLanes = 16;
constexpr int64_t kStripRows = 256;

constexpr int64_t blocksOf(int64_t n, int64_t size) { return (n + size - 1) / size; }

template <typename TileOf, size_t... R>
constexpr auto tilesOf(TileOf tileOf, std::index_sequence<R...>) {
  return std::array{tileOf(std::integral_constant<int, static_cast<int>(R) + 1>())...};
}

// Outputs o0 .. o0 + Rows - 1 (w: the weight's row o0) of a block's samples (xb: [in][16]), each
// from bias[r] where bias is not null, then over the inputs in order; stored to `samples` rows of
// y (the block's first sample's row, at o0).
template <int Rows>
void forwardTile(const float* xb, const float* w, int64_t in, const float* bias, float* y, int64_t out,
                 int64_t samples) {
  // Every loop over the sums unrolled whole, so that they live in registers: where one was
  // left a loop, GCC 12 kept the sums in memory and stored all 12 at every input (twice as slow
  // as OpenBLAS on Zen 3, which stores one 256-bit vector a cycle).
  __m256 sums[Rows][2];
#pragma GCC unroll 6
  for (int r = 0; r < Rows; ++r) sums[r][0] = sums[r][1] = bias ? _mm256_set1_ps(bias[r]) : _mm256_setzero_ps();
  for (const float* wk = w; wk != w + in; ++wk, xb += kTileLanes) {
    const __m256 x0 = _mm256_loadu_ps(xb), x1 = _mm256_loadu_ps(xb + 8);
#pragma GCC unroll 6
    for (int r = 0; r < Rows; ++r) {
      const __m256 wr = _mm256_broadcast_ss(wk + r * in);
      sums[r][0] = _mm256_fmadd_ps(x0, wr, sums[r][0]);
      sums[r][1] = _mm256_fmadd_ps(x1, wr, sums[r][1]);
    }
  }
  const __m256i rows = firstLanes8(Rows);
#pragma GCC unroll 2
  for (int v = 0; v < 2; ++v) {
    __m256 t[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) t[i] = i < Rows ? sums[i][v] : _mm256_setzero_ps();
    transpose8(t);
    for (int64_t j = 0; j < 8 && 8 * v + j < samples; ++j) _mm256_maskstore_ps(y + (8 * v + j) * out, rows, t[j]);
  }
}

constexpr auto kForwardTiles =
    tilesOf([](auto rows) { return &forwardTile<decltype(rows)::value>; }, std::make_index_sequence<kTileRows>());

// strip[o][16] = w[o][c] (c < cols; zeros after) for the strip's `rows` rows (w: its first row and
// column; rows `in` apart).
void copyStrip(const float* w, int64_t in, int64_t rows, int64_t cols, float* strip) {
  if (cols == kTileLanes) {
    for (int64_t o = 0; o < rows; ++o, w += in, strip += kTileLanes) {
      _mm256_storeu_ps(strip, _mm256_loadu_ps(w));
      _mm256_storeu_ps(strip + 8, _mm256_loadu_ps(w + 8));
    }
    return;
  }
  const __m256i low = firstLanes8(cols), high = firstLanes8(cols - 8);
  for (int64_t o = 0; o < rows; ++o, w += in, strip += kTileLanes) {
    _mm256_storeu_ps(strip, _mm256_maskload_ps(w, low));
    _mm256_storeu_ps(strip + 8, _mm256_maskload_ps(w + 8, high));
  }
}

// Inputs k0 .. k0 + cols - 1 (cols <= 16) of a block's Rows samples, summed over a strip's `rows`
// weight rows (strip: [rows][16]; g: the block's gradOutput at the strip's first row, [rows][6]),
// stored to gx (the block's first sample's row, at k0), each sum from 0 where `first`, else from gx.
template <int Rows>
void gradInputTile(const float* strip, const float* g, int64_t rows, float* gx, int64_t in, int64_t cols,
                   bool first) {
  // A whole strip of 16 inputs reads and writes gx with plain loads and stores: a masked store
  // takes several times as long as a plain one on Zen 3.
  const bool whole = cols == kTileLanes;
  const __m256i low = firstLanes8(cols), high = firstLanes8(cols - 8);
  __m256 sums[Rows][2];
#pragma GCC unroll 6
  for (int r = 0; r < Rows; ++r) {
    if (first) {
      sums[r][0] = sums[r][1] = _mm256_setzero_ps();
    } else if (whole) {
      sums[r][0] = _mm256_loadu_ps(gx + r * in);
      sums[r][1] = _mm256_loadu_ps(gx + r * in + 8);
    } else {
      sums[r][0] = _mm256_maskload_ps(gx + r * in, low);
      sums[r][1] = _mm256_maskload_ps(gx + r * in + 8, high);
    }
  }
  for (int64_t o = 0; o < rows; ++o, strip += kTileLanes, g += kTileRows) {
    const __m256 w0 = _mm256_loadu_ps(strip), w1 = _mm256_loadu_ps(strip + 8);
#pragma GCC unroll 6
    for (int r = 0; r < Rows; ++r) {
      const __m256 gr = _mm256_broadcast_ss(g + r);
      sums[r][0] = _mm256_fmadd_ps(w0, gr, sums[r][0]);
      sums[r][1] = _mm256_fmadd_ps(w1, gr, sums[r][1]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < Rows; ++r) {
    if (whole) {
      _mm256_storeu_ps(gx + r * in, sums[r][0]);
      _mm256_storeu_ps(gx + r * in + 8, sums[r][1]);
    } else {
      _mm256_maskstore_ps(gx + r * in, low, sums[r][0]);
      _mm256_maskstore_ps(gx + r * in + 8, high, sums[r][1]);
    }
  }
}

constexpr auto kGradInputTiles = tilesOf([](auto samples) { return &gradInputTile<decltype(samples)::value>; },
                                         std::make_index_sequence<kTileRows>());

template <int64_t R>
void transposeAll(const Device& device, const float* src, int64_t rows, int64_t cols, float* packed) {
  parallelRanges(device, blocksOf(rows, R), 1,
                 [&](int64_t begin, int64_t end) { transposeBlocks8<R>(src, rows, cols, begin, end, packed); });
}

// The sum of the 16 lanes lo:hi as the AVX-512 form's laneSum adds them: lanes i and i + 8, then
// i and i + 4, i + 2, i + 1.
inline float laneSum(__m256 lo, __m256 hi) {
  __m256 v = _mm256_add_ps(lo, hi);
  v = _mm256_add_ps(v, _mm256_permute2f128_ps(v, v, 0x01));
  v = _mm256_add_ps(v, _mm256_permute_ps(v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm256_add_ps(v, _mm256_permute_ps(v, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm256_cvtss_f32(v);
}

// y[s][o] for S samples (x: the first one's row), every output o: each output's dot product in 16
// lanes (two vectors), summed across them, then the bias added.
template <int S>
void narrowForward(const float* x, const float* w, const float* bias, float* y, int64_t in, int64_t out) {
  for (int64_t o = 0; o < out; ++o) {
    __m256 sums[S][2];
#pragma GCC unroll 4
    for (int s = 0; s < S; ++s) sums[s][0] = sums[s][1] = _mm256_setzero_ps();
    const float* wo = w + o * in;
    int64_t k = 0;
    for (; k + 16 <= in; k += 16) {
      const __m256 w0 = _mm256_loadu_ps(wo + k), w1 = _mm256_loadu_ps(wo + k + 8);
#pragma GCC unroll 4
      for (int s = 0; s < S; ++s) {
        sums[s][0] = _mm256_fmadd_ps(_mm256_loadu_ps(x + s * in + k), w0, sums[s][0]);
        sums[s][1] = _mm256_fmadd_ps(_mm256_loadu_ps(x + s * in + k + 8), w1, sums[s][1]);
      }
    }
    if (k < in) {
      const __m256i low = firstLanes8(in - k), high = firstLanes8(in - k - 8);
      const __m256 w0 = _mm256_maskload_ps(wo + k, low), w1 = _mm256_maskload_ps(wo + k + 8, high);
#pragma GCC unroll 4
      for (int s = 0; s < S; ++s) {
        sums[s][0] = _mm256_fmadd_ps(_mm256_maskload_ps(x + s * in + k, low), w0, sums[s][0]);
        sums[s][1] = _mm256_fmadd_ps(_mm256_maskload_ps(x + s * in + k + 8, high), w1, sums[s][1]);
      }
    }
#pragma GCC unroll 4
    for (int s = 0; s < S; ++s) y[s * out + o] = (bias ? bias[o] : 0.f) + laneSum(sums[s][0], sums[s][1]);
  }
}

// gx[s][k..k+15] = sum over o < out of gy[s][o] w[o][k..k+15] for S samples; Masked: the last
// inputs, fewer than 16.
template <int S, bool Masked>
inline __attribute__((always_inline)) void narrowGradInput(const float* gy, const float* w, float* gx, int64_t in,
                                                           int64_t out, int64_t k) {
  const __m256i low = Masked ? firstLanes8(in - k) : firstLanes8(8);
  const __m256i high = Masked ? firstLanes8(in - k - 8) : firstLanes8(8);
  __m256 sums[S][2];
#pragma GCC unroll 4
  for (int s = 0; s < S; ++s) sums[s][0] = sums[s][1] = _mm256_setzero_ps();
  for (int64_t o = 0; o < out; ++o) {
    const float* wo = w + o * in + k;
    const __m256 w0 = Masked ? _mm256_maskload_ps(wo, low) : _mm256_loadu_ps(wo);
    const __m256 w1 = Masked ? _mm256_maskload_ps(wo + 8, high) : _mm256_loadu_ps(wo + 8);
#pragma GCC unroll 4
    for (int s = 0; s < S; ++s) {
      const __m256 g = _mm256_broadcast_ss(gy + s * out + o);
      sums[s][0] = _mm256_fmadd_ps(w0, g, sums[s][0]);
      sums[s][1] = _mm256_fmadd_ps(w1, g, sums[s][1]);
    }
  }
  // Plain stores but for the last inputs: a masked store takes several times as long on Zen 3.
#pragma GCC unroll 4
  for (int s = 0; s < S; ++s) {
    if (Masked) {
      _mm256_maskstore_ps(gx + s * in + k, low, sums[s][0]);
      _mm256_maskstore_ps(gx + s * in + k + 8, high, sums[s][1]);
    } else {
      _mm256_storeu_ps(gx + s * in + k, sums[s][0]);
      _mm256_storeu_ps(gx + s * in + k + 8, sums[s][1]);
    }
  }
}

template <int S>
void narrowGradInputRow(const float* gy, const float* w, float* gx, int64_t in, int64_t out) {
  int64_t k = 0;
  for (; k + 16 <= in; k += 16) narrowGradInput<S, false>(gy, w, gx, in, out, k);
  if (k < in) narrowGradInput<S, true>(gy, w, gx, in, out, k);
}

// The most outputs whose weight gradient one pass over the samples sums: 12 sums, the vector of
// inputs and a broadcast gradient fill 14 of AVX2's 16 registers.
constexpr int kNarrowOutputs = 12;

// gw[o][k..k+7] += scale * sum over the samples of gy[n][o] x[n][k..k+7], for `outputs`
// (<= kNarrowOutputs) outputs from o0 and the vectors of inputs from k = begin to end.
void narrowWeightGradient(const float* x, const float* gy, float* gw, int64_t batch, int64_t in, int64_t out,
                          int64_t o0, int64_t outputs, float scale, int64_t begin, int64_t end) {
  for (int64_t k = begin; k < end; k += 8) {
    const __m256i lanes = firstLanes8(end - k);
    // Plain loads and stores but for the last inputs, fewer than 8: a masked store takes
    // several times as long on Zen 3.
    const bool whole = end - k >= 8;
    __m256 sums[kNarrowOutputs];
#pragma GCC unroll 12
    for (int o = 0; o < kNarrowOutputs; ++o) sums[o] = _mm256_setzero_ps();
    for (int64_t n = 0; n < batch; ++n) {
      const __m256 xv = whole ? _mm256_loadu_ps(x + n * in + k) : _mm256_maskload_ps(x + n * in + k, lanes);
      const float* g = gy + n * out + o0;
#pragma GCC unroll 12
      for (int o = 0; o < kNarrowOutputs; ++o)
        if (o < outputs) sums[o] = _mm256_fmadd_ps(xv, _mm256_broadcast_ss(g + o), sums[o]);
    }
    const __m256 s = _mm256_set1_ps(scale);
#pragma GCC unroll 12
    for (int o = 0; o < kNarrowOutputs; ++o)
      if (o < outputs) {
        float* row = gw + (o0 + o) * in + k;
        if (whole)
          _mm256_storeu_ps(row, _mm256_fmadd_ps(sums[o], s, _mm256_loadu_ps(row)));
        else
          _mm256_maskstore_ps(row, lanes, _mm256_fmadd_ps(sums[o], s, _mm256_maskload_ps(row, lanes)));
      }
  }
}

}  // namespace

void narrowUpdateOutput(const Device& device, const float* x, const float* weight, const float* bias, float* y,
                        int64_t batch, int64_t in, int64_t out) {
  parallelRanges(device, batch, 8, [&](int64_t begin, int64_t end) {
    int64_t n = begin;
    for (; n + 4 <= end; n += 4) narrowForward<4>(x + n * in, weight, bias, y + n * out, in, out);
    for (; n < end; ++n) narrowForward<1>(x + n * in, weight, bias, y + n * out, in, out);
  });
}

void narrowUpdateGradInput(const Device& device, const float* gradY, const float* weight, float* gradX, int64_t batch,
                           int64_t in, int64_t out) {
  parallelRanges(device, batch, 8, [&](int64_t begin, int64_t end) {
    int64_t n = begin;
    for (; n + 4 <= end; n += 4) narrowGradInputRow<4>(gradY + n * out, weight, gradX + n * in, in, out);
    for (; n < end; ++n) narrowGradInputRow<1>(gradY + n * out, weight, gradX + n * in, in, out);
  });
}

void narrowAccGradWeight(const Device& device, const float* x, const float* gradY, float* gradWeight, int64_t batch,
                         int64_t in, int64_t out, float scale) {
  const int64_t vectors = blocksOf(in, 8);
  parallelRanges(device, vectors, 8, [&](int64_t begin, int64_t end) {
    // The outputs in as few passes as the registers allow, of sizes differing by at most one.
    const int64_t passes = blocksOf(out, kNarrowOutputs), size = blocksOf(out, passes);
    for (int64_t o0 = 0; o0 < out; o0 += size)
      narrowWeightGradient(x, gradY, gradWeight, batch, in, out, o0, std::min(size, out - o0), scale, 8 * begin,
                           std::min(in, 8 * end));
  });
}

void directUpdateOutput(const Device& device, const float* x, const float* weight, const float* bias, float* y,
                        int64_t batch, int64_t in, int64_t out, Tensor& workspace) {
  const int64_t blocks = blocksOf(batch, kTileLanes), tiles = blocksOf(out, kTileRows);
  workspace.resize_({blocks * kTileLanes * in}, device);
  float* packed = workspace.data();
  transposeAll<kTileLanes>(device, x, batch, in, packed);
  parallelRanges(device, tiles, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t o0 = t * kTileRows, rows = std::min(kTileRows, out - o0);
      for (int64_t block = 0; block < blocks; ++block)
        kForwardTiles[rows - 1](packed + block * kTileLanes * in, weight + o0 * in, in, bias ? bias + o0 : nullptr,
                                y + block * kTileLanes * out + o0, out,
                                std::min(kTileLanes, batch - block * kTileLanes));
    }
  });
}

void directUpdateGradInput(const Device& device, const float* gradY, const float* weight, float* gradX, int64_t batch,
                           int64_t in, int64_t out, Tensor& workspace) {
  const int64_t blocks = blocksOf(batch, kTileRows), strips = blocksOf(in, kTileLanes);
  const int64_t packedFloats = blocks * kTileRows * out, stripFloats = kStripRows * kTileLanes;
  const int parts = parallelParts(device, strips);
  workspace.resize_({packedFloats + parts * stripFloats}, device);
  float* packed = workspace.data();
  transposeAll<kTileRows>(device, gradY, batch, out, packed);
  parallelFor(device, parts, [&](int part) {
    const Range mine = partRange(strips, parts, part);
    float* strip = packed + packedFloats + part * stripFloats;
    for (int64_t o0 = 0; o0 < out; o0 += kStripRows) {
      const int64_t rows = std::min(kStripRows, out - o0);
      for (int64_t s = mine.begin; s < mine.end; ++s) {
        const int64_t k0 = s * kTileLanes, cols = std::min(kTileLanes, in - k0);
        copyStrip(weight + o0 * in + k0, in, rows, cols, strip);
        for (int64_t block = 0; block < blocks; ++block)
          kGradInputTiles[std::min(kTileRows, batch - block * kTileRows) - 1](
              strip, packed + (block * out + o0) * kTileRows, rows, gradX + block * kTileRows * in + k0, in, cols,
              o0 == 0);
      }
    }
  });
}

#else

// Never called: the Fits functions keep every call off machines without AVX2 (DirectLinear.cpp).
void narrowUpdateOutput(const Device&, const float*, const float*, const float*, float*, int64_t, int64_t, int64_t) {
  NN_CHECK(false, "nn.Linear: the narrow route is not in this build");
}
void narrowUpdateGradInput(const Device&, const float*, const float*, float*, int64_t, int64_t, int64_t) {
  NN_CHECK(false, "nn.Linear: the narrow route is not in this build");
}
void narrowAccGradWeight(const Device&, const float*, const float*, float*, int64_t, int64_t, int64_t, float) {
  NN_CHECK(false, "nn.Linear: the narrow route is not in this build");
}
void directUpdateOutput(const Device&, const float*, const float*, const float*, float*, int64_t, int64_t, int64_t,
                        Tensor&) {
  NN_CHECK(false, "nn.Linear: the direct route is not in this build");
}
void directUpdateGradInput(const Device&, const float*, const float*, float*, int64_t, int64_t, int64_t, Tensor&) {
  NN_CHECK(false, "nn.Linear: the direct route is not in this build");
}

#endif

}  // namespace nn::cpu::avx2
