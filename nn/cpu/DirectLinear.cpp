// The direct and narrow routes of the CPU Linear (DirectLinear.h).
#include "nn/cpu/DirectLinear.h"

#include <algorithm>
#include <array>
#include <type_traits>
#include <utility>

#include "nn/core/ComputeThreads.h"
#include "nn/core/Error.h"
#include "nn/cpu/Avx2.h"
#include "nn/cpu/Avx512.h"
#include "nn/cpu/DirectLinearForms.h"
#include "nn/cpu/Isa.h"
#include "nn/cpu/Multiversion.h"

namespace nn::cpu {

// Note [Linear tiles]
// A training batch is small beside a layer's weights (128 samples against 1024 x 1024 weights):
// each weight meets each sample once per product. OpenBLAS packs the whole weight matrix into
// panels of its own for every product (for the forward a transposing copy), and runs such
// products well below the core's rate of fused multiply-adds. Here the small operand is
// rearranged instead:
// - forward: the batch is transposed into blocks of 32 samples ([block][in][32], zeros past the
//   batch). A tile is 12 outputs x 32 samples in 24 vector sums; each step over the inputs loads
//   two vectors of the block and broadcasts 12 weights, one from each of the tile's 12 weight
//   rows, which are read where they are, in order, once from memory and then from the cache for
//   the batch's other blocks. The sums are transposed in registers into the samples' rows.
// - gradInput: the sums run over the outputs, the weight's rows, so a tile (12 samples x 32
//   inputs) reads a column strip of the weight: rows 4 KB apart, which the first-level cache
//   holds only a dozen of (one set). Each thread copies 256 rows of a strip into a contiguous
//   buffer (32 KB), which every block of 12 samples then reads; gradOutput is transposed into
//   blocks of 12 samples ([block][out][12]).
// Each sum is one chain of fused multiply-adds in a fixed order (the forward's from the bias over
// the inputs, the gradInput's over the outputs), the same floats whatever the thread count or
// the batch. The weight gradient stays OpenBLAS's: tiles of our own ran it slower. The
// gradInput's strip copies wait on memory (256 rows of two lines each, 4 KB apart, which no
// prefetcher foresees), so each tile asks for a share of the next strip's rows as its sums go
// (StripAhead: tile b of the strip for rows b, b + blocks, ...). What each choice gained, and
// the variants that did not, are in bench/README.md ("Measurements behind the code").

#if NN_AVX512

namespace avx512 {

namespace {

constexpr int64_t kTileRows = 12;    // the forward's weight rows, the gradInput's samples
constexpr int64_t kTileLanes = 32;   // the forward's samples, the gradInput's inputs: 2 vectors
constexpr int64_t kStripRows = 256;  // weight rows of a gradInput strip

constexpr int64_t blocksOf(int64_t n, int64_t size) { return (n + size - 1) / size; }

// A tile kernel's instances for 1 to kTileRows rows: element r - 1 is tileOf(r), r given as a
// std::integral_constant<int, r>; a call takes the one for the rows it has.
template <typename TileOf, size_t... R>
constexpr auto tilesOf(TileOf tileOf, std::index_sequence<R...>) {
  return std::array{tileOf(std::integral_constant<int, static_cast<int>(R) + 1>())...};
}

// The forward's tile: outputs o0 .. o0 + Rows - 1 (w: the weight's row o0) of a block's samples
// (xb: [in][32]), each from bias[r] where bias is not null; stored to `samples` rows of y (the
// block's first sample's row, at o0).
template <int Rows>
NN_AVX512_KERNEL void forwardTile(const float* xb, const float* w, int64_t in, const float* bias, float* y, int64_t out,
                                  int64_t samples) {
  // Every loop over the sums unrolled whole, so that they live in registers: where one was
  // left a loop, GCC 12 kept the sums in memory and stored all 24 at every input.
  __m512 sums[Rows][2];
#pragma GCC unroll 12
  for (int r = 0; r < Rows; ++r) sums[r][0] = sums[r][1] = bias ? _mm512_set1_ps(bias[r]) : _mm512_setzero_ps();
  // One pointer along the rows and each row's offset from the first: 12 offsets, 11 registers.
  for (const float* wk = w; wk != w + in; ++wk, xb += kTileLanes) {
    const __m512 x0 = _mm512_loadu_ps(xb), x1 = _mm512_loadu_ps(xb + 16);
#pragma GCC unroll 12
    for (int r = 0; r < Rows; ++r) {
      const __m512 wr = _mm512_set1_ps(wk[r * in]);
      sums[r][0] = _mm512_fmadd_ps(x0, wr, sums[r][0]);
      sums[r][1] = _mm512_fmadd_ps(x1, wr, sums[r][1]);
    }
  }
#pragma GCC unroll 2
  for (int v = 0; v < 2; ++v) {
    __m512 t[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) t[i] = i < Rows ? sums[i][v] : _mm512_setzero_ps();
    transpose16(t);
    for (int64_t j = 0; j < 16 && 16 * v + j < samples; ++j)
      _mm512_mask_storeu_ps(y + (16 * v + j) * out, firstLanes(Rows), t[j]);
  }
}

// kForwardTiles[rows - 1]: the tile of 1 to 12 weight rows.
constexpr auto kForwardTiles =
    tilesOf([](auto rows) { return &forwardTile<decltype(rows)::value>; }, std::make_index_sequence<kTileRows>());

// strip[o][32] = w[o][c] (c < cols; zeros after) for the strip's `rows` rows (w: its first row
// and column; rows `in` apart).
NN_AVX512_KERNEL void copyStrip(const float* w, int64_t in, int64_t rows, int64_t cols, float* strip) {
  const __mmask16 low = firstLanes(cols), high = firstLanes(cols - 16);
  for (int64_t o = 0; o < rows; ++o, w += in, strip += kTileLanes) {
    _mm512_storeu_ps(strip, _mm512_maskz_loadu_ps(low, w));
    _mm512_storeu_ps(strip + 16, _mm512_maskz_loadu_ps(high, w + 16));
  }
}

// The rows of the weight's next strip (its first row at `strip`; `rows` of them, none where there
// is no next strip) that one of the gradInput's tiles asks the cache for: row, row + step, ...,
// each as its sums reach the same row of the current strip.
struct StripAhead {
  const float* strip;
  int64_t rows, row, step;
};

// The gradInput's tile: inputs k0 .. k0 + cols - 1 (cols <= 32) of a block's Rows samples (12
// but in the batch's last block), summed over a strip's `rows` weight rows (strip: [rows][32];
// g: the block's gradOutput at the strip's first row, [rows][12]), stored to gx (the block's
// first sample's row, at k0), each sum from 0 where `first` (the weight's first strip), else
// from gx.
// `ahead`: the rows of the next strip this tile asks for (Note [Linear tiles]).
template <int Rows>
NN_AVX512_KERNEL void gradInputTile(const float* strip, const float* g, int64_t rows, float* gx, int64_t in,
                                    int64_t cols, bool first, StripAhead ahead) {
  const __mmask16 low = firstLanes(cols), high = firstLanes(cols - 16);
  __m512 sums[Rows][2];
#pragma GCC unroll 12
  for (int r = 0; r < Rows; ++r) {
    sums[r][0] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(low, gx + r * in);
    sums[r][1] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(high, gx + r * in + 16);
  }
  for (int64_t o = 0; o < rows; ++o, strip += kTileLanes, g += kTileRows) {
    if (o == ahead.row && o < ahead.rows) {
      _mm_prefetch(reinterpret_cast<const char*>(ahead.strip + o * in), _MM_HINT_T1);
      _mm_prefetch(reinterpret_cast<const char*>(ahead.strip + o * in + 16), _MM_HINT_T1);
      ahead.row += ahead.step;
    }
    const __m512 w0 = _mm512_loadu_ps(strip), w1 = _mm512_loadu_ps(strip + 16);
#pragma GCC unroll 12
    for (int r = 0; r < Rows; ++r) {
      const __m512 gr = _mm512_set1_ps(g[r]);
      sums[r][0] = _mm512_fmadd_ps(w0, gr, sums[r][0]);
      sums[r][1] = _mm512_fmadd_ps(w1, gr, sums[r][1]);
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < Rows; ++r) {
    _mm512_mask_storeu_ps(gx + r * in, low, sums[r][0]);
    _mm512_mask_storeu_ps(gx + r * in + 16, high, sums[r][1]);
  }
}

// kGradInputTiles[samples - 1]: the tile of 1 to 12 samples.
constexpr auto kGradInputTiles = tilesOf([](auto samples) { return &gradInputTile<decltype(samples)::value>; },
                                         std::make_index_sequence<kTileRows>());

// transposeBlocks<R> of all of src's blocks, on the device's compute threads.
template <int64_t R>
void transposeAll(const Device& device, const float* src, int64_t rows, int64_t cols, float* packed) {
  parallelRanges(device, blocksOf(rows, R), 1,
                 [&](int64_t begin, int64_t end) { transposeBlocks<R>(src, rows, cols, begin, end, packed); });
}

// Note [Narrow layers]
// A classifier's last layer has few outputs (10): a forward tile of 12 outputs then holds mostly
// nothing, a gradInput tile sums over 10 rows only, and OpenBLAS's panels are as empty, so such a
// layer ran far below the rate of the wide ones. Up to 16 outputs the three
// products are plain loops over vectors of 16 inputs: the forward a dot product of each output's
// weight row with 8 samples at a time (8 vector sums, each summed across its lanes at the end,
// then the bias added); gradInput, for 4 samples at a time, the weight rows summed over the
// outputs for 4 vectors of inputs (16 independent chains of fused multiply-adds, each in the
// tiles' order); the weight gradient, for a vector of 16 inputs, the samples' products summed for
// each output.

// The sum of v's 16 lanes, halves added in turn (plain shuffles: GCC 12's _mm512_reduce_add_ps
// uses an undefined vector, which it then warns of).
NN_AVX512_KERNEL inline float laneSum(__m512 v) {
  v = _mm512_add_ps(v, __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  v = _mm512_add_ps(v, __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11));
  v = _mm512_add_ps(v, __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
  v = _mm512_add_ps(v, __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14));
  return v[0];
}

// y[s][o] (rows `out` apart) for S samples (x: the first one's row), every output o.
template <int S>
NN_AVX512_KERNEL void narrowForward(const float* x, const float* w, const float* bias, float* y, int64_t in,
                                    int64_t out) {
  for (int64_t o = 0; o < out; ++o) {
    __m512 sums[S];
#pragma GCC unroll 8
    for (int s = 0; s < S; ++s) sums[s] = _mm512_setzero_ps();
    const float* wo = w + o * in;
    int64_t k = 0;
    for (; k + 16 <= in; k += 16) {
      const __m512 wv = _mm512_loadu_ps(wo + k);
#pragma GCC unroll 8
      for (int s = 0; s < S; ++s) sums[s] = _mm512_fmadd_ps(_mm512_loadu_ps(x + s * in + k), wv, sums[s]);
    }
    if (k < in) {
      const __mmask16 lanes = firstLanes(in - k);
      const __m512 wv = _mm512_maskz_loadu_ps(lanes, wo + k);
#pragma GCC unroll 8
      for (int s = 0; s < S; ++s) sums[s] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(lanes, x + s * in + k), wv, sums[s]);
    }
#pragma GCC unroll 8
    for (int s = 0; s < S; ++s) y[s * out + o] = (bias ? bias[o] : 0.f) + laneSum(sums[s]);
  }
}

// gx[s][k..k+63] (rows `in` apart) = sum over o < out of gy[s][o] w[o][k..k+63] (gy's rows `out`
// apart) for S samples, the weight's vectors shared by the samples; Masked: the last inputs, fewer
// than 64.
template <int S, bool Masked>
NN_AVX512_KERNEL inline __attribute__((always_inline)) void narrowGradInput(const float* gy, const float* w, float* gx,
                                                                            int64_t in, int64_t out, int64_t k) {
  constexpr int kVectors = 4;
  __mmask16 lanes[kVectors];
  __m512 sums[S][kVectors];
#pragma GCC unroll 4
  for (int v = 0; v < kVectors; ++v) lanes[v] = Masked ? firstLanes(in - k - 16 * v) : __mmask16(0xffff);
#pragma GCC unroll 16
  for (int i = 0; i < S * kVectors; ++i) sums[i / kVectors][i % kVectors] = _mm512_setzero_ps();
  for (int64_t o = 0; o < out; ++o) {
    __m512 g[S];
#pragma GCC unroll 4
    for (int s = 0; s < S; ++s) g[s] = _mm512_set1_ps(gy[s * out + o]);
    const float* wo = w + o * in + k;
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      const __m512 wv = Masked ? _mm512_maskz_loadu_ps(lanes[v], wo + 16 * v) : _mm512_loadu_ps(wo + 16 * v);
#pragma GCC unroll 4
      for (int s = 0; s < S; ++s) sums[s][v] = _mm512_fmadd_ps(wv, g[s], sums[s][v]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < S * kVectors; ++i)
    _mm512_mask_storeu_ps(gx + (i / kVectors) * in + k + 16 * (i % kVectors), lanes[i % kVectors],
                          sums[i / kVectors][i % kVectors]);
}

// narrowGradInput over all inputs.
template <int S>
NN_AVX512_KERNEL void narrowGradInputRow(const float* gy, const float* w, float* gx, int64_t in, int64_t out) {
  int64_t k = 0;
  for (; k + 64 <= in; k += 64) narrowGradInput<S, false>(gy, w, gx, in, out, k);
  if (k < in) narrowGradInput<S, true>(gy, w, gx, in, out, k);
}

// gw[o][k..k+15] += scale * sum over the samples of gy[n][o] x[n][k..k+15], for every o < out
// (16 at most) and the vectors of inputs from k = begin to end (multiples of 16 but the last).
NN_AVX512_KERNEL void narrowWeightGradient(const float* x, const float* gy, float* gw, int64_t batch, int64_t in,
                                           int64_t out, float scale, int64_t begin, int64_t end) {
  for (int64_t k = begin; k < end; k += 16) {
    const __mmask16 lanes = firstLanes(end - k);
    __m512 sums[16];
#pragma GCC unroll 16
    for (int o = 0; o < 16; ++o) sums[o] = _mm512_setzero_ps();
    for (int64_t n = 0; n < batch; ++n) {
      const __m512 xv = _mm512_maskz_loadu_ps(lanes, x + n * in + k);
      const float* g = gy + n * out;
#pragma GCC unroll 16
      for (int o = 0; o < 16; ++o)
        if (o < out) sums[o] = _mm512_fmadd_ps(xv, _mm512_set1_ps(g[o]), sums[o]);
    }
    const __m512 s = _mm512_set1_ps(scale);
#pragma GCC unroll 16
    for (int o = 0; o < 16; ++o)
      if (o < out) {
        float* row = gw + o * in + k;
        _mm512_mask_storeu_ps(row, lanes, _mm512_fmadd_ps(sums[o], s, _mm512_maskz_loadu_ps(lanes, row)));
      }
  }
}

// The narrow gradInput's samples [begin, end) 4 at a time (16 chains of sums), those left one at
// a time.
void narrowGradInputRange(const float* gy, const float* w, float* gx, int64_t in, int64_t out, int64_t begin,
                          int64_t end) {
  int64_t n = begin;
  for (; n + 4 <= end; n += 4) narrowGradInputRow<4>(gy + n * out, w, gx + n * in, in, out);
  for (; n < end; ++n) narrowGradInputRow<1>(gy + n * out, w, gx + n * in, in, out);
}

// The narrow forward's samples in groups of 8, those left one at a time.
void narrowForwardRange(const float* x, const float* w, const float* bias, float* y, int64_t in, int64_t out,
                        int64_t begin, int64_t end) {
  int64_t n = begin;
  for (; n + 8 <= end; n += 8) narrowForward<8>(x + n * in, w, bias, y + n * out, in, out);
  for (; n < end; ++n) narrowForward<1>(x + n * in, w, bias, y + n * out, in, out);
}

}  // namespace

void narrowUpdateOutput(const Device& device, const float* x, const float* weight, const float* bias, float* y,
                        int64_t batch, int64_t in, int64_t out) {
  parallelRanges(device, batch, 8,
                 [&](int64_t begin, int64_t end) { narrowForwardRange(x, weight, bias, y, in, out, begin, end); });
}

void narrowUpdateGradInput(const Device& device, const float* gradY, const float* weight, float* gradX, int64_t batch,
                           int64_t in, int64_t out) {
  parallelRanges(device, batch, 8,
                 [&](int64_t begin, int64_t end) { narrowGradInputRange(gradY, weight, gradX, in, out, begin, end); });
}

void narrowAccGradWeight(const Device& device, const float* x, const float* gradY, float* gradWeight, int64_t batch,
                         int64_t in, int64_t out, float scale) {
  const int64_t vectors = blocksOf(in, 16);
  parallelRanges(device, vectors, 4, [&](int64_t begin, int64_t end) {
    narrowWeightGradient(x, gradY, gradWeight, batch, in, out, scale, 16 * begin, std::min(in, 16 * end));
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
        // The next strip: the next columns of these rows, else the first columns of the next rows.
        const bool across = s + 1 < mine.end;
        const int64_t nextO0 = across ? o0 : o0 + kStripRows;
        const float* next =
            nextO0 < out ? weight + nextO0 * in + (across ? k0 + kTileLanes : mine.begin * kTileLanes) : nullptr;
        const int64_t nextRows = next ? std::min(kStripRows, out - nextO0) : 0;
        for (int64_t block = 0; block < blocks; ++block)
          kGradInputTiles[std::min(kTileRows, batch - block * kTileRows) - 1](
              strip, packed + (block * out + o0) * kTileRows, rows, gradX + block * kTileRows * in + k0, in, cols,
              o0 == 0, StripAhead{next, nextRows, block, blocks});
      }
    }
  });
}

}  // namespace avx512

#endif

bool narrowLinearFits(int64_t, int64_t, int64_t out) { return isaAtLeast(Isa::avx2) && out <= 16; }

bool directLinearFits(int64_t batch, int64_t, int64_t out) {
  // From 32 outputs: at 10 (a classifier's), rearranging the batch costs more than OpenBLAS's
  // whole product.
  return isaAtLeast(Isa::avx2) && batch >= 16 && batch <= 512 && out >= 32;
}

void narrowLinearUpdateOutput(const Device& device, const float* x, const float* weight, const float* bias, float* y,
                              int64_t batch, int64_t in, int64_t out) {
  NN_CPU_FORM(narrowUpdateOutput(device, x, weight, bias, y, batch, in, out));
}

void narrowLinearUpdateGradInput(const Device& device, const float* gradY, const float* weight, float* gradX,
                                 int64_t batch, int64_t in, int64_t out) {
  NN_CPU_FORM(narrowUpdateGradInput(device, gradY, weight, gradX, batch, in, out));
}

void narrowLinearAccGradWeight(const Device& device, const float* x, const float* gradY, float* gradWeight,
                               int64_t batch, int64_t in, int64_t out, float scale) {
  NN_CPU_FORM(narrowAccGradWeight(device, x, gradY, gradWeight, batch, in, out, scale));
}

void directLinearUpdateOutput(const Device& device, const float* x, const float* weight, const float* bias, float* y,
                              int64_t batch, int64_t in, int64_t out, Tensor& workspace) {
  NN_CPU_FORM(directUpdateOutput(device, x, weight, bias, y, batch, in, out, workspace));
}

void directLinearUpdateGradInput(const Device& device, const float* gradY, const float* weight, float* gradX,
                                 int64_t batch, int64_t in, int64_t out, Tensor& workspace) {
  NN_CPU_FORM(directUpdateGradInput(device, gradY, weight, gradX, batch, in, out, workspace));
}

}  // namespace nn::cpu
