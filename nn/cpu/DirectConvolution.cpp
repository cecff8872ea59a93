// The direct route of the CPU convolution (DirectConvolution.h). The batch is cut into one part
// per compute thread, each part a range of whole samples; for a 3x3 layer a part copies each of
// its samples with a zero border (padded) and works on it in the cache, a 1x1 layer's it reads
// where it is. The forward and the gradInput give every sample the same floats whatever the
// thread count; the weight gradient is summed per part and the parts' sums added in part order.
// The tiles are written once over Vec (Vec.h) in the second half of this file, which VecLevels.h
// includes once per level (Note [Direct tiles]); each value is summed in the same order at every
// level (the forward and gradInput over the planes, then the taps, from zero, its bias added
// last; each weight-gradient sum over the positions of each sample in order), so the levels give
// the same floats.
#ifndef NN_VEC_LEVEL

#include "nn/cpu/DirectConvolution.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "nn/cpu/ConvolutionBias.h"
#include "nn/cpu/Isa.h"
#include "nn/cpu/Multiversion.h"
#include "nn/cpu/Vec.h"
#include "nn/runtime/ComputeThreads.h"
#include "nn/tensor/Error.h"

namespace nn::cpu::direct {

// A cross-correlation of stride 1 or 2 with size x size kernels: 3x3 with padding 1, or 1x1
// without: `inPlanes` planes of height x width in, `outPlanes` planes of outHeight x outWidth out.
// A 3x3 layer reads each sample from a copy with a zero border (padded), a 1x1 layer from where
// it is.
struct Correlation {
  int64_t batch, inPlanes, outPlanes, height, width, stride, outHeight, outWidth, size = 3;

  bool padded() const { return size == 3; }
  int64_t taps() const { return size * size; }
  int64_t inPositions() const { return height * width; }
  int64_t positions() const { return outHeight * outWidth; }
  int64_t rowFloats() const { return padded() ? width + 2 : width; }
  int64_t planeFloats() const { return padded() ? (height + 2) * rowFloats() : inPositions(); }
  int64_t paddedFloats() const { return padded() ? inPlanes * planeFloats() : 0; }
};

// Note [The next sample ahead]
// When a training step reaches a layer, the layer's tensors have left every cache (the step's
// other tensors together are far larger), and a sample's input is read in one burst (copied with
// its border, or row by row by the first tiles) and its output written in bursts: each line
// waited for memory. So while one sample's tiles run, the lines of the next sample's input, and
// of its output for writing, are asked for, a few after each tile, to arrive while the sums are
// computed.
class Ahead {
 public:
  Ahead() = default;
  /// The lines of the next sample's input [in, in + inFloats) and output [out, out + outFloats)
  /// over `calls` calls of step().
  Ahead(const float* in, int64_t inFloats, float* out, int64_t outFloats, int64_t calls)
      : in_(reinterpret_cast<const char*>(in)),
        inEnd_(reinterpret_cast<const char*>(in + inFloats)),
        out_(reinterpret_cast<char*>(out)),
        outEnd_(reinterpret_cast<char*>(out + outFloats)),
        inPerCall_(linesPerCall(inFloats, calls)),
        outPerCall_(linesPerCall(outFloats, calls)) {}

  void step() {
    for (int64_t i = 0; i < inPerCall_ && in_ < inEnd_; ++i, in_ += 64) __builtin_prefetch(in_, 0, 2);
    for (int64_t i = 0; i < outPerCall_ && out_ < outEnd_; ++i, out_ += 64) __builtin_prefetch(out_, 1, 2);
  }

 private:
  static int64_t linesPerCall(int64_t floats, int64_t calls) {
    const int64_t lines = (floats * 4 + 63) / 64;
    return (lines + calls - 1) / std::max<int64_t>(calls, 1);
  }

  const char* in_ = nullptr;
  const char* inEnd_ = nullptr;
  char* out_ = nullptr;
  char* outEnd_ = nullptr;
  int64_t inPerCall_ = 0;
  int64_t outPerCall_ = 0;
};

// The compute threads' parts of the batch, whole samples each.
inline int partsOf(const Device& device, const Correlation& p) { return parallelParts(device, p.batch); }

// The workspace: `kernelFloats` for the arranged kernels, then `partFloats` for each part.
inline float* workspaceFor(const Device& device, const Correlation& p, int64_t kernelFloats, int64_t partFloats,
                           Tensor& workspace) {
  workspace.resize_({kernelFloats + partsOf(device, p) * partFloats}, device);
  return workspace.data();
}

// Whether output rows of this width are ones the tiles of the forward and gradInput serve.
inline bool narrow(int64_t outWidth) { return outWidth == 7 || outWidth == 8 || outWidth == 14; }

// kernels[block][c][tap][lane]: the taps of output plane block * lanes + lane over input plane c,
// from weight[o][c][tap]; `turned`: from weight[c][o], each kernel turned by 180 degrees (the
// gradInput's correlation).
inline void arrangeKernels(const Correlation& p, const float* weight, bool turned, int64_t lanes, float* kernels) {
  const int64_t taps = p.taps();
  for (int64_t o = 0; o < p.outPlanes; ++o)
    for (int64_t c = 0; c < p.inPlanes; ++c)
      for (int64_t t = 0; t < taps; ++t)
        kernels[((o / lanes * p.inPlanes + c) * taps + t) * lanes + o % lanes] =
            turned ? weight[(c * p.outPlanes + o) * taps + taps - 1 - t] : weight[(o * p.inPlanes + c) * taps + t];
}

// Sample `input` ([inPlanes][height][width]) into the interior of `padded`, whose border the
// caller has zeroed. Width, where not 0, is p.width known when compiling: its rows are moved in
// registers (a call to memcpy costs more than a row of 7 or 14 floats); 0 is any width, a call
// to memcpy a row.
template <int Width>
void pad(const Correlation& p, const float* input, float* padded) {
  const int64_t width = Width > 0 ? Width : p.width;
  for (int64_t c = 0; c < p.inPlanes; ++c)
    for (int64_t y = 0; y < p.height; ++y)
      std::memcpy(padded + c * p.planeFloats() + (y + 1) * p.rowFloats() + 1, input + (c * p.height + y) * width,
                  width * sizeof(float));
}

// Sample n of input as the tiles read it: copied into `padded` for 3x3 kernels, where it is for
// 1x1 ones.
template <int W, int S, int K>
const float* sampleInput(const Correlation& p, const float* input, int64_t n, float* padded) {
  const float* sample = input + n * p.inPlanes * p.inPositions();
  if constexpr (K == 1) return sample;
  pad<S * W>(p, sample, padded);
  return padded;
}

// f(W, S, K), each a std::integral_constant<int>, for the output width W, the stride S and the
// kernel size K of p (a combination the route serves).
template <int S, int K, typename F>
void byWidth(const Correlation& p, F f) {
  const std::integral_constant<int, S> stride;
  const std::integral_constant<int, K> size;
  if (p.outWidth == 7) return f(std::integral_constant<int, 7>(), stride, size);
  if (p.outWidth == 8) return f(std::integral_constant<int, 8>(), stride, size);
  f(std::integral_constant<int, 14>(), stride, size);
}
template <typename F>
void byShape(const Correlation& p, F f) {
  if (p.size == 1) return byWidth<2, 1>(p, f);
  if (p.stride == 1) return byWidth<1, 3>(p, f);
  byWidth<2, 3>(p, f);
}

// The gradInput of a layer of stride 2 (Note [Stride-2 gradInput], DirectConvolution.cpp). The tap
// of row (column) offset d in the class of parity q: 1 where q is 0; where q is 1, 2 for d = 0 and
// 0 for d = 1.
constexpr int classTap(int q, int d) { return q == 0 ? 1 : (d == 0 ? 2 : 0); }

// Floats of the kernels of one class, whatever its taps: 4 taps of each kernel at most.
inline int64_t classKernelFloats(const Correlation& p) { return p.inPlanes * p.outPlanes * 4; }

// Class (py, px)'s kernels at kernels + (2 py + px) classKernelFloats(p): [block][o][dy][dx][lane]
// of input plane block * lanes + lane, for the forward's correlation p; of a 1x1 layer, class
// (0, 0)'s alone, the kernels themselves.
inline void arrangeClassKernels(const Correlation& p, const float* weight, int64_t lanes, float* kernels) {
  if (p.size == 1) {
    for (int64_t c = 0; c < p.inPlanes; ++c)
      for (int64_t o = 0; o < p.outPlanes; ++o)
        kernels[(c / lanes * p.outPlanes + o) * lanes + c % lanes] = weight[o * p.inPlanes + c];
    return;
  }
  for (int py = 0; py < 2; ++py)
    for (int px = 0; px < 2; ++px) {
      float* k = kernels + (2 * py + px) * classKernelFloats(p);
      for (int64_t c = 0; c < p.inPlanes; ++c)
        for (int64_t o = 0; o < p.outPlanes; ++o)
          for (int dy = 0; dy <= py; ++dy)
            for (int dx = 0; dx <= px; ++dx)
              k[(((c / lanes * p.outPlanes + o) * (1 + py) + dy) * (1 + px) + dx) * lanes + c % lanes] =
                  weight[((o * p.inPlanes + c) * 3 + classTap(py, dy)) * 3 + classTap(px, dx)];
    }
}

// A sample's gradOutput (outPlanes of outHeight x W) into gp, whose rows are W + 1 floats and
// planes outHeight + 1 rows: the last row and column stay the zeros the caller put there.
template <int W>
void padGradOutput(const Correlation& p, const float* gradOutput, float* gp) {
  const int64_t rowFloats = W + 1, planeFloats = (p.outHeight + 1) * rowFloats;
  for (int64_t o = 0; o < p.outPlanes; ++o)
    for (int64_t a = 0; a < p.outHeight; ++a)
      std::memcpy(gp + o * planeFloats + a * rowFloats, gradOutput + (o * p.outHeight + a) * W, W * sizeof(float));
}

// The four classes' sums of a sample (classes: [class][inPlanes][outHeight][W]) interleaved into
// the rows of its gradInput.
template <int W>
void interleaveClasses(const Correlation& p, const float* classes, float* gradInput) {
  const int64_t positions = p.positions(), classFloats = p.inPlanes * positions;
  for (int64_t c = 0; c < p.inPlanes; ++c)
    for (int64_t a = 0; a < p.outHeight; ++a)
      for (int py = 0; py < 2; ++py) {
        float* row = gradInput + (c * p.height + 2 * a + py) * 2 * W;
        const float* even = classes + 2 * py * classFloats + c * positions + a * W;
        const float* odd = even + classFloats;
        for (int b = 0; b < W; ++b) {
          row[2 * b] = even[b];
          row[2 * b + 1] = odd[b];
        }
      }
}

// The gradInput of a 1x1 layer of stride 2 for one sample from class (0, 0)'s sums: those at the
// even positions of the even rows, zeros elsewhere.
template <int W>
void spreadPointwise(const Correlation& p, const float* sums, float* gradInput) {
  const int64_t positions = p.positions();
  for (int64_t c = 0; c < p.inPlanes; ++c)
    for (int64_t a = 0; a < p.outHeight; ++a) {
      float* row = gradInput + (c * p.height + 2 * a) * 2 * W;
      const float* even = sums + c * positions + a * W;
      for (int b = 0; b < W; ++b) {
        row[2 * b] = even[b];
        row[2 * b + 1] = 0.f;
      }
      std::fill(row + 2 * W, row + 4 * W, 0.f);
    }
}

// gradWeight += scale * the parts' weight-gradient sums added in part order (partSums(part):
// [block][c][tap][lanes], output plane block * lanes + lane), into part 0's.
template <typename PartSums>
void addPartSums(const Correlation& p, int parts, PartSums partSums, int64_t lanes, float scale, float* gradWeight) {
  const int64_t taps = p.taps(), sums = p.outPlanes * p.inPlanes * taps;
  float* total = partSums(0);
  for (int part = 1; part < parts; ++part)
    for (int64_t i = 0; i < sums; ++i) total[i] += partSums(part)[i];
  for (int64_t o = 0; o < p.outPlanes; ++o)
    for (int64_t c = 0; c < p.inPlanes; ++c)
      for (int64_t t = 0; t < taps; ++t)
        gradWeight[(o * p.inPlanes + c) * taps + t] +=
            scale * total[((o / lanes * p.inPlanes + c) * taps + t) * lanes + o % lanes];
}

}  // namespace nn::cpu::direct

#define NN_VEC_SOURCE "nn/cpu/DirectConvolution.cpp"
#include "nn/cpu/VecLevels.h"

namespace nn::cpu {

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

#if NN_VEC256

// The form of the kernels' level; the Fits functions keep every call off machines with neither.

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

#else  // the tiles, in namespace NN_VEC_LEVEL over its Vec (VecLevels.h)

namespace nn::cpu::NN_VEC_LEVEL {

namespace {

using namespace direct;
using Reg = Vec::Reg;
constexpr int kLanes = Vec::kLanes;

#include "nn/cpu/VecBlocks.h"

// Note [Direct tiles]
// A forward or gradInput tile holds the sums of V vectors of planes (2 but in the stride-2
// gradInput of input planes not a multiple of 2 kLanes) at up to kTile consecutive positions,
// beside the tap's V kernel vectors and the broadcast input value: 14 positions in 28 of
// AVX-512's 32 registers, 6 in 12 of AVX2's 16. Rows of W positions are tiled in groups of
// kGroup<W> rows, each group cut into tiles of nearly equal size: at AVX-512 groups of whole rows
// (kTile / W of them, one tile: 2 rows of 7, 1 of 8 or 14), at AVX2 the fewest rows whose
// positions make whole tiles of 6 (6 rows of 7, 3 of 8 or 14), where tiles of single rows would
// be 3 and 4 positions long; the rows after the last group one at a time, each in as few tiles of
// nearly equal size as fit (7 at AVX-512; 3 + 4, 4 + 4 or 4 + 5 + 5 at AVX2).
// The weight gradient's blocks are 32 output planes (kGradVectors vectors); one pass over a
// sample's positions sums the products of kPassRows kernel rows (all 3 at AVX-512: 9 taps x 2
// vectors in 18 registers; 1 at AVX2: 3 taps x 4 vectors in 12).
constexpr int kTile = (Vec::kRegisters - 3) / 2;
constexpr bool kWholeRows = Vec::kRegisters == 32;

// Output planes of a forward tile, and of a weight-gradient block.
constexpr int64_t kBlock = 2 * kLanes;
constexpr int64_t kGradBlock = 32;
constexpr int kGradVectors = kGradBlock / kLanes;
template <int K>
constexpr int kPassRows = Vec::kRegisters == 32 ? K : 1;

// The rows of a group of rows of W positions (Note [Direct tiles]).
template <int W>
constexpr int groupOf() {
  if (kWholeRows) return kTile / W > 1 ? kTile / W : 1;
  int rows = 1;
  while (rows * W % kTile != 0) ++rows;
  return rows;
}
template <int W>
constexpr int kGroup = groupOf<W>();
// The tiles of `positions` consecutive positions, and the first position of tile j of them.
constexpr int tilesIn(int positions) { return (positions + kTile - 1) / kTile; }
constexpr int tileBegin(int positions, int j) { return j * positions / tilesIn(positions); }

// The sums of a tile of N consecutive output positions, from position P of a block of rows of W
// positions, for V kLanes output planes, of stride S, over KH x KW taps: `in` is the input
// (rowFloats floats a row, `planes` planes planeFloats apart) under the first tap of the block's
// first position, `kernels` the block's [planes][KH KW][V kLanes]; each sum, over its planes and
// taps in order, plus its plane's bias (where not null) goes to its plane of `out`, the block's
// first output plane at the block's first position (planes outPlaneFloats apart). Where `room`
// (the positions of the plane from the tile's first on) is a vector or more, whole vectors are
// stored, the lanes past the tile to positions that later tiles then store (a masked store takes
// several times as long on Zen 3).
template <int W, int P, int N, int S, int KH, int KW, int V>
NN_VEC_TILE void tileSums(const float* in, int64_t rowFloats, int64_t planes, int64_t planeFloats, const float* kernels,
                          const float* bias, float* out, int64_t outPlaneFloats, int64_t room) {
  static_assert(N >= 1 && N <= kTile && kTile <= kLanes, "a tile's positions fit a vector");
  constexpr int lanes = kLanes * V;
  Reg sums[V][N];
#pragma GCC unroll 28
  for (int v = 0; v < V; ++v)
#pragma GCC unroll 28
    for (int i = 0; i < N; ++i) sums[v][i] = Vec::zero();
  for (int64_t c = 0; c < planes; ++c, in += planeFloats, kernels += KH * KW * lanes)
#pragma GCC unroll 1
    for (int ky = 0; ky < KH; ++ky)
#pragma GCC unroll 1
      for (int kx = 0; kx < KW; ++kx) {
        const float* k = kernels + (KW * ky + kx) * lanes;
        Reg kv[V];
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v) kv[v] = Vec::load(k + kLanes * v);
        const float* corner = in + ky * rowFloats + kx;
#pragma GCC unroll 28
        for (int i = 0; i < N; ++i) {
          // One offset from `corner` for both rows: GCC 12 under -fsanitize=shift or
          // signed-integer-overflow read the second row wrongly when it chose between two row
          // pointers here (tests/cpu/convolution_direct_test.cpp under --config=asan).
          const Reg x = Vec::broadcast(corner + S * ((P + i) / W * rowFloats + (P + i) % W));
#pragma GCC unroll 2
          for (int v = 0; v < V; ++v) sums[v][i] = Vec::fmadd(x, kv[v], sums[v][i]);
        }
      }
  const typename Vec::Mask mask = Vec::firstLanes(N);
#pragma GCC unroll 2
  for (int v = 0; v < V; ++v) {
    Reg r[kLanes];
#pragma GCC unroll 16
    for (int i = 0; i < kLanes; ++i) r[i] = i < N ? sums[v][i] : Vec::zero();
    Vec::transpose(r);
#pragma GCC unroll 16
    for (int j = 0; j < kLanes; ++j) {
      const int plane = kLanes * v + j;
      const Reg value = bias ? Vec::add(Vec::set1(bias[plane]), r[j]) : r[j];
      float* dst = out + plane * outPlaneFloats + P;
      if (room >= kLanes)
        Vec::store(dst, value);
      else
        Vec::store(dst, mask, value);
    }
  }
}

// The tiles of the block's first `Positions` positions, from tile J on; arguments as tileSums's,
// `room` the plane's positions from the block's first on; `ahead` steps once a tile (Note [The
// next sample ahead]).
template <int W, int Positions, int S, int KH, int KW, int V, int J = 0>
void spanTiles(const float* in, int64_t rowFloats, int64_t planes, int64_t planeFloats, const float* kernels,
               const float* bias, float* out, int64_t outPlaneFloats, int64_t room, Ahead& ahead) {
  if constexpr (J < tilesIn(Positions)) {
    constexpr int begin = tileBegin(Positions, J), n = tileBegin(Positions, J + 1) - begin;
    tileSums<W, begin, n, S, KH, KW, V>(in, rowFloats, planes, planeFloats, kernels, bias, out, outPlaneFloats,
                                        room - begin);
    ahead.step();
    spanTiles<W, Positions, S, KH, KW, V, J + 1>(in, rowFloats, planes, planeFloats, kernels, bias, out, outPlaneFloats,
                                                 room, ahead);
  }
}

// The tiles of a block of outHeight rows of W positions (Note [Direct tiles]).
template <int W>
int64_t tilesOf(int64_t outHeight) {
  return outHeight / kGroup<W> * tilesIn(kGroup<W> * W) + outHeight % kGroup<W> * tilesIn(W);
}

// The sums of all outHeight rows of W output positions of one block of V kLanes output planes;
// arguments as tileSums's, `in` and `out` at the first row; `ahead` steps once a tile.
template <int W, int S, int KH, int KW, int V>
void tileRows(const float* in, int64_t rowFloats, int64_t planes, int64_t planeFloats, const float* kernels,
              const float* bias, float* out, int64_t outHeight, int64_t outPlaneFloats, Ahead& ahead) {
  int64_t y = 0;
  for (; y + kGroup<W> <= outHeight; y += kGroup<W>)
    spanTiles<W, kGroup<W> * W, S, KH, KW, V>(in + S * y * rowFloats, rowFloats, planes, planeFloats, kernels, bias,
                                              out + y * W, outPlaneFloats, (outHeight - y) * W, ahead);
  for (; y < outHeight; ++y)
    spanTiles<W, W, S, KH, KW, V>(in + S * y * rowFloats, rowFloats, planes, planeFloats, kernels, bias, out + y * W,
                                  outPlaneFloats, (outHeight - y) * W, ahead);
}

// sums[tap][kGradBlock] += the products, over a sample's output positions (height x width, stride
// S), of the input value each of the K x K taps reaches (`in`: one plane, padded for 3x3 kernels,
// rowFloats floats a row) and the gradOutput of kGradBlock planes there
// (gradients[position][kGradBlock]): one pass over the positions for each kPassRows<K> kernel rows.
template <int S, int K>
NN_VEC_TILE void tapSums(const float* in, int64_t rowFloats, int64_t height, int64_t width, const float* gradients,
                         float* sums) {
  constexpr int Q = kGradVectors, taps = kPassRows<K> * K;
  for (int ky0 = 0; ky0 < K; ky0 += kPassRows<K>) {
    Reg acc[taps][Q];
    float* passSums = sums + ky0 * K * kGradBlock;
#pragma GCC unroll 16
    for (int t = 0; t < taps; ++t)
#pragma GCC unroll 4
      for (int q = 0; q < Q; ++q) acc[t][q] = Vec::load(passSums + t * kGradBlock + kLanes * q);
    const float* g = gradients;
    for (int64_t y = 0; y < height; ++y)
#pragma GCC unroll 1
      for (int64_t x = 0; x < width; ++x, g += kGradBlock) {
        const float* corner = in + S * (y * rowFloats + x) + ky0 * rowFloats;
        // The taps' input values first, then each vector of gradients once for all of them: at
        // AVX2 its 3 broadcasts, 12 sums and one vector of gradients fill the 16 registers,
        // where the 4 vectors of gradients loaded first would not fit beside the sums.
        Reg v[taps];
#pragma GCC unroll 16
        for (int t = 0; t < taps; ++t) v[t] = Vec::broadcast(corner + t / K * rowFloats + t % K);
#pragma GCC unroll 4
        for (int q = 0; q < Q; ++q) {
          const Reg gq = Vec::load(g + kLanes * q);
#pragma GCC unroll 16
          for (int t = 0; t < taps; ++t) acc[t][q] = Vec::fmadd(v[t], gq, acc[t][q]);
        }
      }
#pragma GCC unroll 16
    for (int t = 0; t < taps; ++t)
#pragma GCC unroll 4
      for (int q = 0; q < Q; ++q) Vec::store(passSums + t * kGradBlock + kLanes * q, acc[t][q]);
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
// ([outPlanes][positions]), added to sums[block][c][tap][kGradBlock]; `gradients` holds
// outPlanes x positions floats.
template <int S, int K>
void sampleTapSums(const Correlation& p, const float* input, const float* gradOutput, float* gradients, float* sums,
                   Ahead& inputAhead, Ahead& gradOutputAhead) {
  const int64_t positions = p.positions();
  // gradients[block][position][kGradBlock] (outPlanes is a multiple of kGradBlock).
  transposeBlocks<kGradBlock>(gradOutput, p.outPlanes, positions, 0, p.outPlanes / kGradBlock, gradients);
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
template <int W, int V, int KH, int KW>
void classSums(const Correlation& p, const float* gp, int64_t rowFloats, int64_t planeFloats, const float* kernels,
               float* out, Ahead& ahead) {
  constexpr int lanes = kLanes * V;
  for (int64_t block = 0; block < p.inPlanes / lanes; ++block)
    tileRows<W, 1, KH, KW, V>(gp, rowFloats, p.outPlanes, planeFloats, kernels + block * p.outPlanes * KH * KW * lanes,
                              nullptr, out + block * lanes * p.positions(), p.outHeight, p.positions(), ahead);
}

// Note [Stride-2 gradInput]
// Input position (2a + py, 2b + px) of a 3x3 layer of stride 2 and padding 1 takes gradOutput
// (a, b) through tap (1, 1) where py = px = 0; where py is 1, also gradOutput (a + 1, .) through
// kernel row 0, its row 2 then serving (a, .); the same for columns. Each of the four parity
// classes is thus a correlation of stride 1 of gradOutput (a zero row and column appended) with
// kernels of 1 x 1, 1 x 2, 2 x 1 or 2 x 2 taps, over the input planes one or two vectors at a time: the
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
  // Tiles of two vectors of input planes, or of one where the planes (a multiple of 16,
  // directGradInputFits) are not a multiple of two (AVX-512's only).
  constexpr bool kOneVector = 2 * kLanes > 16;
  const int V = !kOneVector || p.inPlanes % (2 * kLanes) == 0 ? 2 : 1;
  float* kernels = workspaceFor(device, p, kernelFloats, partFloats, workspace);
  arrangeClassKernels(p, weight, kLanes * V, kernels);
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
                        (pointwise ? 1 : 4) * (p.inPlanes / (kLanes * V)) * tilesOf<W>(p.outHeight));
        if constexpr (pointwise) {
          if (!kOneVector || V == 2)
            pointwiseGradInputSample<W, 2>(p, g, kernels, gp + gpFloats, gi, ahead);
          else if constexpr (kOneVector)
            pointwiseGradInputSample<W, 1>(p, g, kernels, gp + gpFloats, gi, ahead);
        } else if (!kOneVector || V == 2) {
          stridedGradInputSample<W, 2>(p, g, kernels, gp, gp + gpFloats, gi, ahead);
        } else if constexpr (kOneVector) {
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

}  // namespace nn::cpu::NN_VEC_LEVEL

#endif
