// The direct and narrow routes of the CPU Linear (DirectLinear.h). The tiles and loops are
// written once over Vec (Vec.h) in the second half of this file, which VecLevels.h includes once
// per level: 16 lanes and 32 registers at avx512, 8 and 16 at avx2, so the AVX2 tiles are smaller,
// but each sum runs in the same order at either level: the same floats.
#ifndef NN_VEC_LEVEL

#include "nn/cpu/DirectLinear.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "nn/cpu/Isa.h"
#include "nn/cpu/Multiversion.h"
#include "nn/cpu/Vec.h"
#include "nn/runtime/ComputeThreads.h"
#include "nn/tensor/Error.h"

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
// Those are the AVX-512 form's sizes; AVX2's 16 registers of 8 lanes hold tiles of 6 x 16 in 12
// sums, and its gradInput tiles do not ask for the next strip (not measured there).

// Note [Narrow layers]
// A classifier's last layer has few outputs (10): a forward tile of 12 outputs then holds mostly
// nothing, a gradInput tile sums over 10 rows only, and OpenBLAS's panels are as empty, so such a
// layer ran far below the rate of the wide ones. Up to 16 outputs the three
// products are plain loops over vectors of 16 inputs: the forward a dot product of each output's
// weight row with 8 samples at a time (8 vector sums, each summed across its lanes at the end,
// then the bias added); gradInput, for 4 samples at a time, the weight rows summed over the
// outputs for 4 vectors of inputs (16 independent chains of fused multiply-adds, each in the
// tiles' order); the weight gradient, for a vector of 16 inputs, the samples' products summed for
// each output. At AVX2 the dot products run in two vectors of 8 lanes, summed across in the same
// order, 4 samples at a time; gradInput over 2 vectors; the weight gradient in passes of up to
// 12 outputs.

namespace linear {

constexpr int64_t blocksOf(int64_t n, int64_t size) { return (n + size - 1) / size; }

// A tile kernel's instances for 1 to sizeof...(R) rows: element r - 1 is tileOf(r), r given as a
// std::integral_constant<int, r>; a call takes the one for the rows it has.
template <typename TileOf, size_t... R>
constexpr auto tilesOf(TileOf tileOf, std::index_sequence<R...>) {
  return std::array{tileOf(std::integral_constant<int, static_cast<int>(R) + 1>())...};
}

// The rows of the weight's next strip (its first row at `strip`; `rows` of them, none where there
// is no next strip) that one of the gradInput's tiles asks the cache for: row, row + step, ...,
// each as its sums reach the same row of the current strip.
struct StripAhead {
  const float* strip;
  int64_t rows, row, step;
};

}  // namespace linear

}  // namespace nn::cpu

#define NN_VEC_SOURCE "nn/cpu/DirectLinear.cpp"
#include "nn/cpu/VecLevels.h"

namespace nn::cpu {

bool narrowLinearFits(int64_t, int64_t, int64_t out) { return isaAtLeast(Isa::avx2) && out <= 16; }

bool directLinearFits(int64_t batch, int64_t, int64_t out) {
  // From 32 outputs: at 10 (a classifier's), rearranging the batch costs more than OpenBLAS's
  // whole product.
  return isaAtLeast(Isa::avx2) && batch >= 16 && batch <= 512 && out >= 32;
}

#if NN_VEC256

// The form of the kernels' level; the Fits functions keep every call off machines with neither.

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

#else

void narrowLinearUpdateOutput(const Device&, const float*, const float*, const float*, float*, int64_t, int64_t,
                              int64_t) {
  NN_CHECK(false, "nn.Linear: the narrow route is not in this build");
}
void narrowLinearUpdateGradInput(const Device&, const float*, const float*, float*, int64_t, int64_t, int64_t) {
  NN_CHECK(false, "nn.Linear: the narrow route is not in this build");
}
void narrowLinearAccGradWeight(const Device&, const float*, const float*, float*, int64_t, int64_t, int64_t, float) {
  NN_CHECK(false, "nn.Linear: the narrow route is not in this build");
}
void directLinearUpdateOutput(const Device&, const float*, const float*, const float*, float*, int64_t, int64_t,
                              int64_t, Tensor&) {
  NN_CHECK(false, "nn.Linear: the direct route is not in this build");
}
void directLinearUpdateGradInput(const Device&, const float*, const float*, float*, int64_t, int64_t, int64_t,
                                 Tensor&) {
  NN_CHECK(false, "nn.Linear: the direct route is not in this build");
}

#endif

}  // namespace nn::cpu

#else  // the tiles and loops, in namespace NN_VEC_LEVEL over its Vec (VecLevels.h)

namespace nn::cpu::NN_VEC_LEVEL {

namespace {

using namespace linear;
using Reg = Vec::Reg;
using Mask = Vec::Mask;
constexpr int64_t kLanes = Vec::kLanes;

#include "nn/cpu/VecBlocks.h"

// The forward's tile: kTileRows weight rows x kTileLanes samples (two vectors), 2 kTileRows sums
// beside the two vectors of samples and a broadcast weight (27 of AVX-512's 32 registers, 15 of
// AVX2's 16); the gradInput's: kTileRows samples x kTileLanes inputs, each weight strip of
// kStripRows rows copied kTileLanes inputs wide.
constexpr int64_t kTileRows = Vec::kRegisters == 32 ? 12 : 6;
constexpr int64_t kTileLanes = 2 * kLanes;
constexpr int64_t kStripRows = 256;
// Whether the gradInput's tiles ask for the next strip's rows (Note [Linear tiles]): measured at
// AVX-512 only.
constexpr bool kStripAhead = Vec::kRegisters == 32;

// The forward's tile: outputs o0 .. o0 + Rows - 1 (w: the weight's row o0) of a block's samples
// (xb: [in][kTileLanes]), each from bias[r] where bias is not null, then over the inputs in order;
// stored to `samples` rows of y (the block's first sample's row, at o0).
template <int Rows>
NN_VEC_TILE void forwardTile(const float* xb, const float* w, int64_t in, const float* bias, float* y, int64_t out,
                             int64_t samples) {
  // Every loop over the sums unrolled whole, so that they live in registers: where one was
  // left a loop, GCC 12 kept the sums in memory and stored all of them at every input.
  Reg sums[Rows][2];
#pragma GCC unroll 12
  for (int r = 0; r < Rows; ++r) sums[r][0] = sums[r][1] = bias ? Vec::set1(bias[r]) : Vec::zero();
  // One pointer along the rows and each row's offset from the first: 12 offsets, 11 registers.
  for (const float* wk = w; wk != w + in; ++wk, xb += kTileLanes) {
    const Reg x0 = Vec::load(xb), x1 = Vec::load(xb + kLanes);
#pragma GCC unroll 12
    for (int r = 0; r < Rows; ++r) {
      const Reg wr = Vec::broadcast(wk + r * in);
      sums[r][0] = Vec::fmadd(x0, wr, sums[r][0]);
      sums[r][1] = Vec::fmadd(x1, wr, sums[r][1]);
    }
  }
  const Mask rows = Vec::firstLanes(Rows);
#pragma GCC unroll 2
  for (int v = 0; v < 2; ++v) {
    Reg t[kLanes];
#pragma GCC unroll 16
    for (int i = 0; i < kLanes; ++i) t[i] = i < Rows ? sums[i][v] : Vec::zero();
    Vec::transpose(t);
    for (int64_t j = 0; j < kLanes && kLanes * v + j < samples; ++j) Vec::store(y + (kLanes * v + j) * out, rows, t[j]);
  }
}

// kForwardTiles[rows - 1]: the tile of 1 to kTileRows weight rows.
constexpr auto kForwardTiles =
    tilesOf([](auto rows) { return &forwardTile<decltype(rows)::value>; }, std::make_index_sequence<kTileRows>());

// strip[o][kTileLanes] = w[o][c] (c < cols; zeros after) for the strip's `rows` rows (w: its first
// row and column; rows `in` apart).
void copyStrip(const float* w, int64_t in, int64_t rows, int64_t cols, float* strip) {
  if (cols == kTileLanes) {
    for (int64_t o = 0; o < rows; ++o, w += in, strip += kTileLanes) {
      Vec::store(strip, Vec::load(w));
      Vec::store(strip + kLanes, Vec::load(w + kLanes));
    }
    return;
  }
  const Mask low = Vec::firstLanes(cols), high = Vec::firstLanes(cols - kLanes);
  for (int64_t o = 0; o < rows; ++o, w += in, strip += kTileLanes) {
    Vec::store(strip, Vec::load(w, low));
    Vec::store(strip + kLanes, Vec::load(w + kLanes, high));
  }
}

// The gradInput's tile: inputs k0 .. k0 + cols - 1 (cols <= kTileLanes) of a block's Rows samples
// (kTileRows but in the batch's last block), summed over a strip's `rows` weight rows (strip:
// [rows][kTileLanes]; g: the block's gradOutput at the strip's first row, [rows][kTileRows]),
// stored to gx (the block's first sample's row, at k0), each sum from 0 where `first` (the
// weight's first strip), else from gx. `ahead`: the rows of the next strip this tile asks for
// where kStripAhead (Note [Linear tiles]).
template <int Rows>
NN_VEC_TILE void gradInputTile(const float* strip, const float* g, int64_t rows, float* gx, int64_t in, int64_t cols,
                               bool first, StripAhead ahead) {
  // A whole strip reads and writes gx with plain loads and stores: a masked store takes several
  // times as long as a plain one on Zen 3.
  const bool whole = cols == kTileLanes;
  const Mask low = Vec::firstLanes(cols), high = Vec::firstLanes(cols - kLanes);
  Reg sums[Rows][2];
#pragma GCC unroll 12
  for (int r = 0; r < Rows; ++r) {
    if (first) {
      sums[r][0] = sums[r][1] = Vec::zero();
    } else if (whole) {
      sums[r][0] = Vec::load(gx + r * in);
      sums[r][1] = Vec::load(gx + r * in + kLanes);
    } else {
      sums[r][0] = Vec::load(gx + r * in, low);
      sums[r][1] = Vec::load(gx + r * in + kLanes, high);
    }
  }
  for (int64_t o = 0; o < rows; ++o, strip += kTileLanes, g += kTileRows) {
    if (kStripAhead && o == ahead.row && o < ahead.rows) {
      _mm_prefetch(reinterpret_cast<const char*>(ahead.strip + o * in), _MM_HINT_T1);
      _mm_prefetch(reinterpret_cast<const char*>(ahead.strip + o * in + 16), _MM_HINT_T1);
      ahead.row += ahead.step;
    }
    const Reg w0 = Vec::load(strip), w1 = Vec::load(strip + kLanes);
#pragma GCC unroll 12
    for (int r = 0; r < Rows; ++r) {
      const Reg gr = Vec::broadcast(g + r);
      sums[r][0] = Vec::fmadd(w0, gr, sums[r][0]);
      sums[r][1] = Vec::fmadd(w1, gr, sums[r][1]);
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < Rows; ++r) {
    if (whole) {
      Vec::store(gx + r * in, sums[r][0]);
      Vec::store(gx + r * in + kLanes, sums[r][1]);
    } else {
      Vec::store(gx + r * in, low, sums[r][0]);
      Vec::store(gx + r * in + kLanes, high, sums[r][1]);
    }
  }
}

// kGradInputTiles[samples - 1]: the tile of 1 to kTileRows samples.
constexpr auto kGradInputTiles = tilesOf([](auto samples) { return &gradInputTile<decltype(samples)::value>; },
                                         std::make_index_sequence<kTileRows>());

// transposeBlocks<R> of all of src's blocks, on the device's compute threads.
template <int64_t R>
void transposeAll(const Device& device, const float* src, int64_t rows, int64_t cols, float* packed) {
  parallelRanges(device, blocksOf(rows, R), 1,
                 [&](int64_t begin, int64_t end) { transposeBlocks<R>(src, rows, cols, begin, end, packed); });
}

// The narrow loops' dot products run in 16 lanes: kDotVectors vectors.
constexpr int kDotVectors = 16 / kLanes;

// The sum of the 16 lanes of v[kDotVectors]: lanes i and i + 8 added, then i and i + 4, i + 2,
// i + 1, at either level.
inline float laneSum(const Reg* v) {
  if constexpr (kDotVectors == 2) return Vec::laneSum(Vec::add(v[0], v[1]));
  return Vec::laneSum(v[0]);
}

// y[s][o] (rows `out` apart) for S samples (x: the first one's row), every output o: each
// output's dot product in 16 lanes, summed across them, then the bias added.
template <int S>
void narrowForward(const float* x, const float* w, const float* bias, float* y, int64_t in, int64_t out) {
  constexpr int N = kDotVectors;
  for (int64_t o = 0; o < out; ++o) {
    Reg sums[S][N];
#pragma GCC unroll 8
    for (int s = 0; s < S; ++s)
#pragma GCC unroll 2
      for (int v = 0; v < N; ++v) sums[s][v] = Vec::zero();
    const float* wo = w + o * in;
    int64_t k = 0;
    for (; k + 16 <= in; k += 16) {
      Reg wv[N];
#pragma GCC unroll 2
      for (int v = 0; v < N; ++v) wv[v] = Vec::load(wo + k + kLanes * v);
#pragma GCC unroll 8
      for (int s = 0; s < S; ++s)
#pragma GCC unroll 2
        for (int v = 0; v < N; ++v) sums[s][v] = Vec::fmadd(Vec::load(x + s * in + k + kLanes * v), wv[v], sums[s][v]);
    }
    if (k < in) {
      Mask lanes[N];
      Reg wv[N];
#pragma GCC unroll 2
      for (int v = 0; v < N; ++v) {
        lanes[v] = Vec::firstLanes(in - k - kLanes * v);
        wv[v] = Vec::load(wo + k + kLanes * v, lanes[v]);
      }
#pragma GCC unroll 8
      for (int s = 0; s < S; ++s)
#pragma GCC unroll 2
        for (int v = 0; v < N; ++v)
          sums[s][v] = Vec::fmadd(Vec::load(x + s * in + k + kLanes * v, lanes[v]), wv[v], sums[s][v]);
    }
#pragma GCC unroll 8
    for (int s = 0; s < S; ++s) y[s * out + o] = (bias ? bias[o] : 0.f) + laneSum(sums[s]);
  }
}

// The inputs of a narrow gradInput step: 64 at AVX-512 (4 vectors), 16 at AVX2 (2).
constexpr int kGradInputVectors = Vec::kRegisters == 32 ? 4 : 2;

// gx[s][k..] (rows `in` apart) = sum over o < out of gy[s][o] w[o][k..] (gy's rows `out` apart)
// for S samples and kGradInputVectors vectors of inputs, the weight's vectors shared by the
// samples; Masked: the last inputs, fewer than a step's.
template <int S, bool Masked>
inline __attribute__((always_inline)) void narrowGradInput(const float* gy, const float* w, float* gx, int64_t in,
                                                           int64_t out, int64_t k) {
  constexpr int V = kGradInputVectors;
  Mask lanes[V];
  Reg sums[S][V];
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) lanes[v] = Vec::firstLanes(Masked ? in - k - kLanes * v : kLanes);
#pragma GCC unroll 16
  for (int i = 0; i < S * V; ++i) sums[i / V][i % V] = Vec::zero();
  for (int64_t o = 0; o < out; ++o) {
    Reg g[S];
#pragma GCC unroll 4
    for (int s = 0; s < S; ++s) g[s] = Vec::broadcast(gy + s * out + o);
    const float* wo = w + o * in + k;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const Reg wv = Masked ? Vec::load(wo + kLanes * v, lanes[v]) : Vec::load(wo + kLanes * v);
#pragma GCC unroll 4
      for (int s = 0; s < S; ++s) sums[s][v] = Vec::fmadd(wv, g[s], sums[s][v]);
    }
  }
  // Plain stores but for the last inputs: a masked store takes several times as long on Zen 3.
#pragma GCC unroll 16
  for (int i = 0; i < S * V; ++i) {
    float* dst = gx + (i / V) * in + k + kLanes * (i % V);
    if (Masked)
      Vec::store(dst, lanes[i % V], sums[i / V][i % V]);
    else
      Vec::store(dst, sums[i / V][i % V]);
  }
}

// narrowGradInput over all inputs.
template <int S>
void narrowGradInputRow(const float* gy, const float* w, float* gx, int64_t in, int64_t out) {
  constexpr int64_t step = kGradInputVectors * kLanes;
  int64_t k = 0;
  for (; k + step <= in; k += step) narrowGradInput<S, false>(gy, w, gx, in, out, k);
  if (k < in) narrowGradInput<S, true>(gy, w, gx, in, out, k);
}

// The most outputs whose weight gradient one pass over the samples sums: 16 at AVX-512 (every
// narrow layer's in one pass), 12 at AVX2 (12 sums, the vector of inputs and a broadcast gradient
// fill 14 of its 16 registers).
constexpr int kNarrowOutputs = Vec::kRegisters == 32 ? 16 : 12;

// gw[o][k..] += scale * sum over the samples of gy[n][o] x[n][k..], for `outputs`
// (<= kNarrowOutputs) outputs from o0 and the vectors of inputs from k = begin to end (multiples
// of a vector but the last).
void narrowWeightGradient(const float* x, const float* gy, float* gw, int64_t batch, int64_t in, int64_t out,
                          int64_t o0, int64_t outputs, float scale, int64_t begin, int64_t end) {
  for (int64_t k = begin; k < end; k += kLanes) {
    const Mask lanes = Vec::firstLanes(end - k);
    // Plain loads and stores but for the last inputs, fewer than a vector: a masked store takes
    // several times as long on Zen 3.
    const bool whole = end - k >= kLanes;
    Reg sums[kNarrowOutputs];
#pragma GCC unroll 16
    for (int o = 0; o < kNarrowOutputs; ++o) sums[o] = Vec::zero();
    for (int64_t n = 0; n < batch; ++n) {
      const Reg xv = whole ? Vec::load(x + n * in + k) : Vec::load(x + n * in + k, lanes);
      const float* g = gy + n * out + o0;
#pragma GCC unroll 16
      for (int o = 0; o < kNarrowOutputs; ++o)
        if (o < outputs) sums[o] = Vec::fmadd(xv, Vec::broadcast(g + o), sums[o]);
    }
    const Reg s = Vec::set1(scale);
#pragma GCC unroll 16
    for (int o = 0; o < kNarrowOutputs; ++o)
      if (o < outputs) {
        float* row = gw + (o0 + o) * in + k;
        if (whole)
          Vec::store(row, Vec::fmadd(sums[o], s, Vec::load(row)));
        else
          Vec::store(row, lanes, Vec::fmadd(sums[o], s, Vec::load(row, lanes)));
      }
  }
}

// The samples of a narrow forward step: 8 at AVX-512, 4 at AVX2.
constexpr int kNarrowSamples = Vec::kRegisters == 32 ? 8 : 4;

}  // namespace

void narrowUpdateOutput(const Device& device, const float* x, const float* weight, const float* bias, float* y,
                        int64_t batch, int64_t in, int64_t out) {
  parallelRanges(device, batch, 8, [&](int64_t begin, int64_t end) {
    int64_t n = begin;
    for (; n + kNarrowSamples <= end; n += kNarrowSamples)
      narrowForward<kNarrowSamples>(x + n * in, weight, bias, y + n * out, in, out);
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
  // Parts of 64 inputs at least.
  parallelRanges(device, blocksOf(in, kLanes), 64 / kLanes, [&](int64_t begin, int64_t end) {
    // The outputs in as few passes as the registers allow, of sizes differing by at most one.
    const int64_t passes = blocksOf(out, kNarrowOutputs), size = blocksOf(out, passes);
    for (int64_t o0 = 0; o0 < out; o0 += size)
      narrowWeightGradient(x, gradY, gradWeight, batch, in, out, o0, std::min(size, out - o0), scale, kLanes * begin,
                           std::min(in, kLanes * end));
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

}  // namespace nn::cpu::NN_VEC_LEVEL

#endif
