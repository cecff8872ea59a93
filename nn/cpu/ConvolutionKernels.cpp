// The CPU table of ConvolutionKernels: im2col of a chunk of samples at a time, then OpenBLAS
// GEMMs: one per sample where a sample's output plane is wide, one for the whole chunk where it
// is narrow (grouped layers, below), except for the weight gradient, which adds sample by
// sample, as the samples alone would (grouping it measured no faster). The batch is cut into
// chunks from its first sample, and the chunks into parts, one per compute thread of the device
// (nn/runtime/ComputeThreads.h), so that every sample sees the same products whatever the thread
// count; each part has its own columns in the workspace, and the weight gradients of parts summed
// apart are added to the module's in part order. A convolution in groups of planes (PyTorch's
// groups; not the grouping of samples above) unfolds all its planes as one, and each group
// multiplies its own block of the columns' rows with its own filters, into its own output planes:
// GEMMs on sub-blocks of the same matrices, in the same order for every sample, whatever the
// thread count. Where the GEMMs multiply in bfloat16 on AMX, the layers of the Winograd route and
// the direct route's 3x3 layers come here in all three passes, their columns read from a chunk of
// samples' padded planes (Note [bfloat16 products take the unfolded route]).
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "nn/cpu/AmxGemm.h"
#include "nn/cpu/AmxTaps.h"
#include "nn/cpu/Blas.h"
#include "nn/cpu/ConvolutionBias.h"
#include "nn/cpu/DirectConvolution.h"
#include "nn/cpu/Multiversion.h"
#include "nn/cpu/Routes.h"
#include "nn/cpu/ShallowConvolution.h"
#include "nn/cpu/Tables.h"
#include "nn/cpu/WinogradConvolution.h"
#include "nn/math/Half.h"
#include "nn/math/Im2Col.h"
#include "nn/runtime/ComputeThreads.h"

namespace nn::cpu {

namespace {

// Unfolded input per chunk: small enough to stay in a core's L2 cache (1 to 2 MB) between
// im2col and the GEMMs that read it, which past that size wait for memory.
constexpr int64_t kChunkBytes = int64_t{256} << 10;

// Layers with fewer output positions than this (a residual network's 14x14 and 7x7 planes,
// LeNet's second convolution) are grouped: a chunk of at least that many columns, up to
// kGroupedChunkBytes of them, goes through one GEMM, whose output (whose gradOutput) is staged
// in the workspace as [outPlanes, chunk * positions]: OpenBLAS runs a product of a few dozen
// columns (one 7x7 sample) well below its rate on a few hundred.
constexpr int64_t kGroupBelow = 256;
constexpr int64_t kGroupedChunkBytes = int64_t{1} << 20;

// The rows that im2col and col2im move are a few dozen floats long. Blocks of 8 compile to
// vector moves; std::copy or a plain loop would become a call to memmove for every row, and so
// would a plain loop over the last few floats: theirs is a loop of 8 with a condition, which
// the compiler leaves as it is.
inline void copyRow(const float* __restrict src, float* __restrict dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) std::memcpy(dst + i, src + i, 8 * sizeof(float));
  for (int64_t j = 0; j < 8; ++j)
    if (i + j < n) dst[i + j] = src[i + j];
}

inline void fillRow(float* dst, int64_t n, float value) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int64_t j = 0; j < 8; ++j) dst[i + j] = value;
  for (int64_t j = 0; j < 8; ++j)
    if (i + j < n) dst[i + j] = value;
}

// dst[j] += src[j] for j < N, a fixed number of vector adds.
template <int64_t N>
inline void addFixed(const float* __restrict src, float* __restrict dst) {
  for (int64_t j = 0; j < N; ++j) dst[j] += src[j];
}

inline void addRow(const float* __restrict src, float* __restrict dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) addFixed<8>(src + i, dst + i);
  for (int64_t j = 0; j < 8; ++j)
    if (i + j < n) dst[i + j] += src[i + j];
}

// One input plane without padding and with stride 1, unfolded (folded back, adding) whole rows at
// a time: tap (ky, kx)'s row of the column matrix, `tapStride` floats after the previous tap's, is
// the plane's outH x outW block at (ky, kx). Width is outW where it is one of the common widths
// (those of LeNet, VGG and residual networks on 28x28 and 32x32 images), so that a row is a fixed
// number of vector moves (the loop control of a run-time length costs as much as the copy), and 0
// where it is not.
template <int64_t Width>
void unfoldPlane(const float* plane, int64_t width, int64_t kH, int64_t kW, int64_t outH, int64_t outW, float* columns,
                 int64_t tapStride) {
  const int64_t length = Width != 0 ? Width : outW;
  for (int64_t ky = 0; ky < kH; ++ky)
    for (int64_t kx = 0; kx < kW; ++kx) {
      const float* src = plane + ky * width + kx;
      float* dst = columns + math::im2colRow(0, ky, kx, kH, kW) * tapStride;
      for (int64_t oy = 0; oy < outH; ++oy, src += width, dst += length)
        if constexpr (Width != 0)
          std::memcpy(dst, src, Width * sizeof(float));
        else
          copyRow(src, dst, length);
    }
}

template <int64_t Width>
void foldPlane(const float* columns, int64_t tapStride, int64_t width, int64_t kH, int64_t kW, int64_t outH,
               int64_t outW, float* plane) {
  const int64_t length = Width != 0 ? Width : outW;
  for (int64_t ky = 0; ky < kH; ++ky)
    for (int64_t kx = 0; kx < kW; ++kx) {
      const float* src = columns + math::im2colRow(0, ky, kx, kH, kW) * tapStride;
      float* dst = plane + ky * width + kx;
      for (int64_t oy = 0; oy < outH; ++oy, src += length, dst += width)
        if constexpr (Width != 0)
          addFixed<Width>(src, dst);
        else
          addRow(src, dst, length);
    }
}

// The same with a stride: tap (ky, kx)'s row takes every dW-th column of every dH-th row. DW is
// dW where it is 2 (a fixed stride vectorises), 0 where it is not.
template <int64_t DW>
void unfoldStridedPlane(const float* __restrict plane, int64_t width, const ConvolutionShape& s,
                        float* __restrict columns, int64_t tapStride) {
  const int64_t dW = DW != 0 ? DW : s.dW;
  for (int64_t ky = 0; ky < s.kH; ++ky)
    for (int64_t kx = 0; kx < s.kW; ++kx) {
      const float* src = plane + ky * width + kx;
      float* dst = columns + math::im2colRow(0, ky, kx, s.kH, s.kW) * tapStride;
      for (int64_t oy = 0; oy < s.outHeight; ++oy, src += s.dH * width, dst += s.outWidth)
        for (int64_t ox = 0; ox < s.outWidth; ++ox) dst[ox] = src[ox * dW];
    }
}

template <int64_t DW>
void foldStridedPlane(const float* __restrict columns, int64_t tapStride, int64_t width, const ConvolutionShape& s,
                      float* __restrict plane) {
  const int64_t dW = DW != 0 ? DW : s.dW;
  for (int64_t ky = 0; ky < s.kH; ++ky)
    for (int64_t kx = 0; kx < s.kW; ++kx) {
      const float* src = columns + math::im2colRow(0, ky, kx, s.kH, s.kW) * tapStride;
      float* dst = plane + ky * width + kx;
      for (int64_t oy = 0; oy < s.outHeight; ++oy, src += s.outWidth, dst += s.dH * width)
        for (int64_t ox = 0; ox < s.outWidth; ++ox) dst[ox * dW] += src[ox];
    }
}

int64_t rowsOf(const ConvolutionShape& s) { return s.inPlanes * s.kH * s.kW; }
int64_t positionsOf(const ConvolutionShape& s) { return s.outHeight * s.outWidth; }
// A group's rows of the columns, which are the length of each of its filters (a row of the
// weight, [outPlanes, groupRows]), and its output planes. Group g's rows and planes start at
// g groupRowsOf(s) and g groupPlanesOf(s).
int64_t groupRowsOf(const ConvolutionShape& s) { return rowsOf(s) / s.groups; }
int64_t groupPlanesOf(const ConvolutionShape& s) { return s.outPlanes / s.groups; }

// Layers without dilation (all but SpatialDilatedConvolution) unfold whole rows of each input
// plane, and fold whole rows back, with none of the per-tap bounds of the general loops, which
// cost more than the copies at these sizes: from the plane itself, or where the layer pads (the
// 3x3 convolutions of VGG and residual networks) from a zero-padded copy of it in the
// workspace. The columns hold the same numbers, and col2im adds the taps of a cell in the same
// order, so the results do not depend on the route.
bool rowRoute(const ConvolutionShape& s) { return s.dilH == 1 && s.dilW == 1; }
bool paddedRoute(const ConvolutionShape& s) { return (s.padH > 0 || s.padW > 0) && rowRoute(s); }
int64_t paddedWidth(const ConvolutionShape& s) { return s.width + 2 * s.padW; }
int64_t paddedFloats(const ConvolutionShape& s) {
  return paddedRoute(s) ? (s.height + 2 * s.padH) * paddedWidth(s) : 0;
}

bool grouped(const ConvolutionShape& s) { return positionsOf(s) < kGroupBelow; }

// Note [bfloat16 products take the unfolded route]
// Where the GEMMs multiply in bfloat16 (autocast bfloat16 or the precision medium: Blas.h) on AMX's
// tiles (AmxGemm.h), the layers that the Winograd route serves in float32, and the direct route's
// layers of stride 1 (a residual network's 3x3 layers on 14x14 and 7x7 planes), take the unfolded
// route in all three passes: AMX runs their products at several times sgemm's rate, while
// Winograd's float32 transforms and the direct route's float32 multiply-adds, which bfloat16 does
// not speed up, take most of their time. The forward reads the columns from the samples' padded
// planes without unfolding them (forwardFromPlanes), as do the weight gradient
// (planesAccGradParameters) and the gradInput, computed as the forward of the layer with turned
// kernels (gradInputShape), where that layer has no more input planes than output planes or a
// sample's columns outgrow kGroupedChunkBytes (bigSamples: VGG's 32 planes on 32x32, 288 rows of
// 1024 positions, 1.2 MB). Where their planes in and out are multiples of 16, the products run over
// the kernel's taps from the planes rounded to bfloat16 once instead, and so do the direct route's
// 3x3 layers of stride 2, from their input's phases (Note [Products over the taps]). On vdpbf16ps
// alone (AMX held off, or a CPU without it) the unfolded route measured slower than Winograd's, and
// float16 products are sgemm's on rounded operands: their routes are float32's. At the levels below
// avx512, neither bfloat16 kernel runs and nothing changes. The layers of unfoldedForBf16 are all
// of stride 1, without dilation or groups.
bool unfoldedForBf16(const ConvolutionShape& s) {
  const bool strideOne = s.dH == 1 && s.dW == 1;
  return (winogradFits(s) || ((directFits(s) || directWeightGradientFits(s)) && strideOne)) && blas::bf16Products() &&
         amxGemmRuns();
}

// Whether a sample's columns outgrow kGroupedChunkBytes (VGG's 32 planes on 32x32).
bool bigSamples(const ConvolutionShape& s) {
  return rowsOf(s) * positionsOf(s) * static_cast<int64_t>(sizeof(float)) > kGroupedChunkBytes;
}

// Samples unfolded at a time: as many as fit kChunkBytes, at least one; for grouped layers at
// least kGroupBelow columns where they fit kGroupedChunkBytes.
int64_t chunkOf(const ConvolutionShape& s) {
  const int64_t sampleBytes = rowsOf(s) * positionsOf(s) * static_cast<int64_t>(sizeof(float));
  int64_t chunk = kChunkBytes / sampleBytes;
  if (grouped(s))
    chunk = std::max(chunk,
                     std::min((kGroupBelow + positionsOf(s) - 1) / positionsOf(s), kGroupedChunkBytes / sampleBytes));
  return std::max<int64_t>(1, std::min(s.batch, chunk));
}

// The samples [begin, end) of part p of `parts`: whole chunks, counted from the first sample.
Range samplesOf(const ConvolutionShape& s, int parts, int p) {
  const int64_t chunk = chunkOf(s);
  const Range chunks = partRange((s.batch + chunk - 1) / chunk, parts, p);
  return {chunks.begin * chunk, std::min(s.batch, chunks.end * chunk)};
}

int parallelPartsOf(const Device& device, const ConvolutionShape& s) {
  return parallelParts(device, (s.batch + chunkOf(s) - 1) / chunkOf(s));
}

// pick(width) for the common output widths, each a compile-time constant (std::integral_constant),
// 0 for any other: the instance of a row loop of fixed length that serves outW.
template <typename Pick>
auto ofWidth(int64_t outW, Pick pick) {
  switch (outW) {
    case 7: return pick(std::integral_constant<int64_t, 7>{});
    case 8: return pick(std::integral_constant<int64_t, 8>{});
    case 14: return pick(std::integral_constant<int64_t, 14>{});
    case 16: return pick(std::integral_constant<int64_t, 16>{});
    case 24: return pick(std::integral_constant<int64_t, 24>{});
    case 28: return pick(std::integral_constant<int64_t, 28>{});
    case 32: return pick(std::integral_constant<int64_t, 32>{});
    default: return pick(std::integral_constant<int64_t, 0>{});
  }
}

auto unfoldOf(int64_t outW) {
  return ofWidth(outW, [](auto width) { return &unfoldPlane<decltype(width)::value>; });
}

// Both loops go sample by sample and plane by plane, so that the plane being read stays in
// the L1 cache.
void im2col(const ConvolutionShape& s, const float* input, int64_t count, float* columns, float* padded) {
  widest([&]() NN_CPU_INLINE {
    const int64_t kH = s.kH, kW = s.kW, dH = s.dH, dW = s.dW, padH = s.padH, padW = s.padW;
    const int64_t height = s.height, width = s.width, outH = s.outHeight, outW = s.outWidth;
    const int64_t positions = positionsOf(s), stride = count * positions, planeSize = height * width;
    const auto unfoldStrided = dW == 2 ? unfoldStridedPlane<2> : unfoldStridedPlane<0>;
    const auto unfold = unfoldOf(outW);
    if (rowRoute(s)) {
      const bool pad = paddedRoute(s);
      const int64_t rowLength = pad ? paddedWidth(s) : width;
      if (pad) fillRow(padded, paddedFloats(s), 0.f);  // the border stays zero: planes write the interior
      for (int64_t n = 0; n < count; ++n)
        for (int64_t c = 0; c < s.inPlanes; ++c) {
          const float* plane = input + (n * s.inPlanes + c) * planeSize;
          if (pad) {
            for (int64_t y = 0; y < height; ++y)
              copyRow(plane + y * width, padded + (y + padH) * rowLength + padW, width);
            plane = padded;
          }
          float* out = columns + math::im2colRow(c, 0, 0, kH, kW) * stride + n * positions;
          if (dH == 1 && dW == 1)
            unfold(plane, rowLength, kH, kW, outH, outW, out, stride);
          else
            unfoldStrided(plane, rowLength, s, out, stride);
        }
      return;
    }
    for (int64_t n = 0; n < count; ++n)
      for (int64_t c = 0; c < s.inPlanes; ++c) {
        const float* plane = input + (n * s.inPlanes + c) * planeSize;
        for (int64_t ky = 0; ky < kH; ++ky)
          for (int64_t kx = 0; kx < kW; ++kx) {
            float* out = columns + math::im2colRow(c, ky, kx, kH, kW) * stride + n * positions;
            const int64_t tapY = ky * s.dilH, tapX = kx * s.dilW;
            const int64_t yFirst = math::convFirstInside(tapY, dH, padH, outH);
            const int64_t yEnd = math::convEndInside(height, tapY, dH, padH, outH);
            const int64_t xFirst = math::convFirstInside(tapX, dW, padW, outW);
            const int64_t xEnd = math::convEndInside(width, tapX, dW, padW, outW);
            if (yFirst >= yEnd || xFirst >= xEnd) {  // this tap only ever reads padding
              fillRow(out, positions, 0.f);
              continue;
            }
            const float* src = plane + math::convInputCoord(yFirst, tapY, dH, padH) * width +
                               math::convInputCoord(xFirst, tapX, dW, padW);
            fillRow(out, yFirst * outW, 0.f);
            float* line = out + yFirst * outW;
            for (int64_t oy = yFirst; oy < yEnd; ++oy, src += dH * width, line += outW) {
              fillRow(line, xFirst, 0.f);
              if (dW == 1)
                copyRow(src, line + xFirst, xEnd - xFirst);
              else
                for (int64_t ox = xFirst; ox < xEnd; ++ox) line[ox] = src[(ox - xFirst) * dW];
              fillRow(line + xEnd, outW - xEnd, 0.f);
            }
            fillRow(line, (outH - yEnd) * outW, 0.f);
          }
      }
  });
}

// Sets the gradInput of `count` samples from their columns: each cell the sum of the taps that
// read it, in tap order, from zero.
void col2im(const ConvolutionShape& s, const float* columns, int64_t count, float* gradInput, float* padded) {
  widest([&]() NN_CPU_INLINE {
    const int64_t kH = s.kH, kW = s.kW, dH = s.dH, dW = s.dW, padH = s.padH, padW = s.padW;
    const int64_t height = s.height, width = s.width, outH = s.outHeight, outW = s.outWidth;
    const int64_t positions = positionsOf(s), stride = count * positions, planeSize = height * width;
    const auto foldStrided = dW == 2 ? foldStridedPlane<2> : foldStridedPlane<0>;
    const auto fold = ofWidth(outW, [](auto width) { return &foldPlane<decltype(width)::value>; });
    if (rowRoute(s)) {
      // Each plane's taps summed from zero, in the plane itself or in the padded copy, whose
      // interior is then copied.
      const bool pad = paddedRoute(s);
      const int64_t rowLength = pad ? paddedWidth(s) : width;
      if (!pad) fillRow(gradInput, count * s.inPlanes * planeSize, 0.f);
      for (int64_t n = 0; n < count; ++n)
        for (int64_t c = 0; c < s.inPlanes; ++c) {
          float* plane = gradInput + (n * s.inPlanes + c) * planeSize;
          float* sums = pad ? padded : plane;
          if (pad) fillRow(padded, paddedFloats(s), 0.f);
          const float* in = columns + math::im2colRow(c, 0, 0, kH, kW) * stride + n * positions;
          if (dH == 1 && dW == 1)
            fold(in, stride, rowLength, kH, kW, outH, outW, sums);
          else
            foldStrided(in, stride, rowLength, s, sums);
          if (pad)
            for (int64_t y = 0; y < height; ++y)
              copyRow(padded + (y + padH) * rowLength + padW, plane + y * width, width);
        }
      return;
    }
    fillRow(gradInput, count * s.inPlanes * planeSize, 0.f);
    for (int64_t n = 0; n < count; ++n)
      for (int64_t c = 0; c < s.inPlanes; ++c) {
        float* plane = gradInput + (n * s.inPlanes + c) * planeSize;
        for (int64_t ky = 0; ky < kH; ++ky)
          for (int64_t kx = 0; kx < kW; ++kx) {
            const float* in = columns + math::im2colRow(c, ky, kx, kH, kW) * stride + n * positions;
            const int64_t tapY = ky * s.dilH, tapX = kx * s.dilW;
            const int64_t yFirst = math::convFirstInside(tapY, dH, padH, outH);
            const int64_t yEnd = math::convEndInside(height, tapY, dH, padH, outH);
            const int64_t xFirst = math::convFirstInside(tapX, dW, padW, outW);
            const int64_t xEnd = math::convEndInside(width, tapX, dW, padW, outW);
            if (yFirst >= yEnd || xFirst >= xEnd) continue;  // this tap only ever reads padding
            float* dst = plane + math::convInputCoord(yFirst, tapY, dH, padH) * width +
                         math::convInputCoord(xFirst, tapX, dW, padW);
            const float* src = in + yFirst * outW + xFirst;
            for (int64_t oy = yFirst; oy < yEnd; ++oy, dst += dH * width, src += outW) {
              if (dW == 1)
                addRow(src, dst, xEnd - xFirst);
              else
                for (int64_t i = 0; i < xEnd - xFirst; ++i) dst[i * dW] += src[i];
            }
          }
      }
  });
}

// The workspace of `parts` parts: each part's columns [rows, chunk * positions], padded plane
// and, for grouped layers, staged output [outPlanes, chunk * positions]; then, where
// `gradients` is set, the weight and bias gradients of every part. Returns the columns of
// part 0; part p's are partFloats(s) further on per part, its padded plane columnFloats(s)
// after its columns, its staged output paddedFloats(s) after that.
int64_t columnFloats(const ConvolutionShape& s) { return rowsOf(s) * chunkOf(s) * positionsOf(s); }
int64_t stagedFloats(const ConvolutionShape& s) { return grouped(s) ? s.outPlanes * chunkOf(s) * positionsOf(s) : 0; }
int64_t partFloats(const ConvolutionShape& s) { return columnFloats(s) + paddedFloats(s) + stagedFloats(s); }

// Sample n of a chunk in its staged [outPlanes, count * positions] form and back.
void stage(const ConvolutionShape& s, const float* sample, int64_t n, int64_t count, float* staged) {
  const int64_t positions = positionsOf(s);
  for (int64_t o = 0; o < s.outPlanes; ++o)
    copyRow(sample + o * positions, staged + o * count * positions + n * positions, positions);
}
int64_t gradientFloats(const ConvolutionShape& s) { return s.outPlanes * groupRowsOf(s) + s.outPlanes; }

float* workspaceFor(const Device& device, const ConvolutionShape& s, int parts, bool gradients, Tensor& workspace) {
  const int64_t floats = parts * partFloats(s) + (gradients ? parts * gradientFloats(s) : 0);
  workspace.resize_({floats}, device);
  return workspace.data();
}

// The layers of unfoldedForBf16 read their columns from the samples' padded planes (amxGemmRows),
// a chunk of samples at a time. The chunk's padded planes lie plane by plane, each sample's after
// the one before, [inPlanes][chunk][padded height][padded width]. Row (c, ky, kx) of the columns,
// taken along a grid as wide as a padded plane (kW - 1 positions more than an output row), is the
// chunk's planes c from row ky, column kx on; sample n's output row oy is the grid's row n x
// padded height + oy. The product's sums at the grid's extra positions (past each output row, and
// the kH - 1 rows between samples) are dropped. One product a chunk rather than a sample: the
// products of a residual network's 7x7 and 14x14 planes are a few dozen columns a sample, too few
// for the tiles, and each call packs the weights again. A part's work: the chunk's padded planes,
// a row of zeros past them (the last rows read up to kW - 1 floats past the planes), and the
// product on the grid, [outPlanes, gridColumns].
constexpr int64_t kPlanesColumns = 1024;  // the grid's columns a chunk aims at

// The grid's rows and columns a sample: a padded plane's; for a layer of stride 2 (the products
// over the taps, below), a phase plane's.
int64_t gridHeight(const ConvolutionShape& s) { return (s.height + 2 * s.padH + s.dH - 1) / s.dH; }
int64_t gridWidth(const ConvolutionShape& s) { return (s.width + 2 * s.padW + s.dW - 1) / s.dW; }
int64_t gridPlane(const ConvolutionShape& s) { return gridHeight(s) * gridWidth(s); }
// Samples a chunk: enough for about kPlanesColumns columns of the grid, at least one.
int64_t planesChunkOf(const ConvolutionShape& s) {
  return std::max<int64_t>(1, std::min(s.batch, kPlanesColumns / gridPlane(s)));
}
// The grid's columns for `count` samples: all but the last sample's padded planes, and its output rows.
int64_t gridColumns(const ConvolutionShape& s, int64_t count) {
  return (count - 1) * gridPlane(s) + s.outHeight * gridWidth(s);
}
int64_t planesFloats(const ConvolutionShape& s) { return s.inPlanes * planesChunkOf(s) * gridPlane(s); }
int64_t gridFloats(const ConvolutionShape& s) {
  return planesFloats(s) + gridWidth(s) + s.outPlanes * gridColumns(s, planesChunkOf(s));
}
int64_t planesChunks(const ConvolutionShape& s) { return (s.batch + planesChunkOf(s) - 1) / planesChunkOf(s); }

// Sample n of a chunk (its planes at `sample`) into the interiors of the chunk's padded planes.
NN_CPU_INLINE inline void copyIntoPlanes(const ConvolutionShape& s, const float* sample, int64_t n, float* planes) {
  const int64_t widthP = gridWidth(s), planeP = gridPlane(s), chunk = planesChunkOf(s);
  for (int64_t c = 0; c < s.inPlanes; ++c) {
    float* plane = planes + (c * chunk + n) * planeP + s.padH * widthP + s.padW;
    for (int64_t y = 0; y < s.height; ++y) copyRow(sample + (c * s.height + y) * s.width, plane + y * widthP, s.width);
  }
}

// taps[row (c, ky, kx) of the columns] = where that row starts in the chunk's padded planes.
void planeTaps(const ConvolutionShape& s, const float* planes, std::vector<const float*>& taps) {
  const int64_t widthP = gridWidth(s), planeP = gridPlane(s), chunk = planesChunkOf(s);
  taps.resize(static_cast<size_t>(rowsOf(s)));
  for (int64_t c = 0; c < s.inPlanes; ++c)
    for (int64_t ky = 0; ky < s.kH; ++ky)
      for (int64_t kx = 0; kx < s.kW; ++kx)
        taps[math::im2colRow(c, ky, kx, s.kH, s.kW)] = planes + c * chunk * planeP + ky * widthP + kx;
}

// output[n] = bias + the sums of sample n's output positions on the grid [outPlanes, cols], for the
// chunk's `count` samples: their planes `plane` positions apart, their rows `width`.
void gridToOutput(const ConvolutionShape& s, const float* grid, int64_t cols, int64_t plane, int64_t width,
                  int64_t count, const float* bias, float* output) {
  const int64_t outSample = s.outPlanes * positionsOf(s);
  for (int64_t n = 0; n < count; ++n)
    copyPlanes(grid + n * plane, cols, width, output + n * outSample, positionsOf(s), s.outWidth, s.outPlanes,
               s.outHeight, s.outWidth, bias);
}

// The outputs of `count` samples (at most planesChunkOf(s)) = bias + W[out, rows] * their columns,
// read from their padded planes (a layer of stride 1 without dilation or groups); `work` holds
// gridFloats(s), whose planes' borders and the row past them are zero (planesForward sets them
// once; a chunk writes the planes' interiors alone).
void forwardFromPlanes(const ConvolutionShape& s, const float* input, int64_t count, const float* weight,
                       const float* bias, float* output, float* work) {
  const int64_t inSample = s.inPlanes * s.height * s.width;
  float* planes = work;
  float* grid = planes + planesFloats(s) + gridWidth(s);
  // The copies and sums of rows of a few floats run in AVX-512's masked moves where they can.
  widest([&]() NN_CPU_INLINE {
    for (int64_t n = 0; n < count; ++n) copyIntoPlanes(s, input + n * inSample, n, planes);
  });
  thread_local std::vector<const float*> taps;
  planeTaps(s, planes, taps);
  const int64_t cols = gridColumns(s, count);
  amxGemmRows(s.outPlanes, cols, rowsOf(s), 1.f, weight, rowsOf(s), taps.data(), 0.f, grid, cols);
  gridToOutput(s, grid, cols, gridPlane(s), gridWidth(s), count, bias, output);
}

// The parts of the device's threads that planesForward splits s's chunks over.
int planesParts(const Device& device, const ConvolutionShape& s) { return parallelParts(device, planesChunks(s)); }

// forwardFromPlanes over the batch, a chunk at a time, the chunks split over `parts` parts;
// `work` holds parts * gridFloats(s).
void planesForward(const Device& device, const ConvolutionShape& s, int parts, float* work, const float* input,
                   const float* weight, const float* bias, float* output) {
  const int64_t chunk = planesChunkOf(s);
  const int64_t inSample = s.inPlanes * s.height * s.width, outSample = s.outPlanes * positionsOf(s);
  parallelFor(device, parts, [&](int p) {
    const Range r = partRange(planesChunks(s), parts, p);
    float* part = work + p * gridFloats(s);
    fillRow(part, planesFloats(s) + gridWidth(s), 0.f);
    for (int64_t first = r.begin * chunk; first < std::min(s.batch, r.end * chunk); first += chunk)
      forwardFromPlanes(s, input + first * inSample, std::min(chunk, s.batch - first), weight, bias,
                        output + first * outSample, part);
  });
}

// The forward of unfoldedForBf16's layers.
void planesUpdateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                        const float* bias, float* output, Tensor& workspace) {
  const int parts = planesParts(device, s);
  workspace.resize_({parts * gridFloats(s)}, device);
  planesForward(device, s, parts, workspace.data(), input, weight, bias, output);
}

// The weight gradient of unfoldedForBf16's layers from the samples' padded planes, a chunk at a
// time: gradWeight[out, rows] += scale * gradOutput on the grid [out, grid columns] * the columns
// [rows, grid columns]^T, the columns' rows read from the planes as the forward reads them and
// gradOutput laid on the grid (the forward's output rows) with zeros at its extra positions, so
// that those add nothing. One product of a chunk's grid columns rather than a sample's positions
// (49 on a 7x7 plane). The product is summed transposed, [rows, out], by the device's parts, each
// from zero, and added to the module's in part order; the bias gradient sample by sample, as the
// unfolded route adds it.
int64_t gridGradientFloats(const ConvolutionShape& s) {
  return planesFloats(s) + gridWidth(s) + s.outPlanes * gridColumns(s, planesChunkOf(s)) + gradientFloats(s);
}

void planesAccGradParameters(const Device& device, const ConvolutionShape& s, const float* input,
                             const float* gradOutput, float* gradWeight, float* gradBias, float scale,
                             Tensor& workspace) {
  const int64_t chunk = planesChunkOf(s), rows = rowsOf(s);
  const int64_t widthP = gridWidth(s), planeP = gridPlane(s), ldGrid = gridColumns(s, chunk);
  const int64_t inSample = s.inPlanes * s.height * s.width, positions = positionsOf(s);
  const int64_t outSample = s.outPlanes * positions;
  const int parts = planesParts(device, s);
  workspace.resize_({parts * gridGradientFloats(s)}, device);
  float* base = workspace.data();
  parallelFor(device, parts, [&](int p) {
    float* planes = base + p * gridGradientFloats(s);
    float* staged = planes + planesFloats(s) + widthP;
    float* gw = staged + s.outPlanes * ldGrid;  // [rows, out], then the part's bias gradient
    float* gb = p == 0 ? gradBias : gw + s.outPlanes * rows;
    // The planes' borders, the row past them and the grid's extra positions stay zero: a chunk
    // writes the planes' interiors and gradOutput's positions alone.
    fillRow(planes, gridGradientFloats(s) - gradientFloats(s), 0.f);
    if (p > 0) fillRow(gb, s.outPlanes, 0.f);
    thread_local std::vector<const float*> taps;
    planeTaps(s, planes, taps);
    // Every part has a chunk at least: planesParts takes no more parts than chunks.
    const Range r = partRange(planesChunks(s), parts, p);
    for (int64_t k = r.begin; k < r.end; ++k) {
      const int64_t first = k * chunk, count = std::min(chunk, s.batch - first);
      for (int64_t n = 0; n < count; ++n) {
        const float* x = input + (first + n) * inSample;
        const float* g = gradOutput + (first + n) * outSample;
        widest([&]() NN_CPU_INLINE {
          copyIntoPlanes(s, x, n, planes);
          for (int64_t o = 0; o < s.outPlanes; ++o)
            for (int64_t oy = 0; oy < s.outHeight; ++oy)
              copyRow(g + (o * s.outHeight + oy) * s.outWidth, staged + o * ldGrid + n * planeP + oy * widthP,
                      s.outWidth);
        });
        if (gb) addSampleBiasGradient(g, positions, scale, gb, 0, s.outPlanes);
      }
      amxGemmRowsOfA(true, rows, s.outPlanes, gridColumns(s, count), scale, taps.data(), staged, ldGrid,
                     k == r.begin ? 0.f : 1.f, gw, s.outPlanes);
    }
  });
  for (int p = 0; p < parts; ++p) {
    const float* gw = base + p * gridGradientFloats(s) + planesFloats(s) + gridWidth(s) + s.outPlanes * ldGrid;
    for (int64_t o = 0; o < s.outPlanes; ++o)
      for (int64_t i = 0; i < rows; ++i) gradWeight[o * rows + i] += gw[i * s.outPlanes + o];
    if (gradBias && p > 0) addRow(gw + s.outPlanes * rows, gradBias, s.outPlanes);
  }
}

// The layer whose forward is s's gradInput, for a layer of stride 1 without dilation or groups:
// gradOutput's planes in, the input's out, each kernel turned by 180 degrees (turnedKernels), the
// padding k - 1 - pad, as the Winograd route computes it (WinogradConvolution.h).
ConvolutionShape gradInputShape(const ConvolutionShape& s) {
  ConvolutionShape t = s;
  t.inPlanes = s.outPlanes;
  t.outPlanes = s.inPlanes;
  t.height = s.outHeight;
  t.width = s.outWidth;
  t.padH = s.kH - 1 - s.padH;
  t.padW = s.kW - 1 - s.padW;
  t.outHeight = s.height;
  t.outWidth = s.width;
  return t;
}

// turned[c][o][ky][kx] = weight[o][c][kH - 1 - ky][kW - 1 - kx], in im2col's row order.
void turnedKernels(const ConvolutionShape& s, const float* weight, float* turned) {
  for (int64_t c = 0; c < s.inPlanes; ++c)
    for (int64_t o = 0; o < s.outPlanes; ++o)
      for (int64_t ky = 0; ky < s.kH; ++ky)
        for (int64_t kx = 0; kx < s.kW; ++kx)
          turned[c * s.outPlanes * s.kH * s.kW + math::im2colRow(o, ky, kx, s.kH, s.kW)] =
              weight[o * rowsOf(s) + math::im2colRow(c, s.kH - 1 - ky, s.kW - 1 - kx, s.kH, s.kW)];
}

// gradInput as the forward of gradInputShape(s) from the planes of gradOutput (forwardFromPlanes),
// without col2im's scattered adds.
void gradInputAsForward(const Device& device, const ConvolutionShape& s, const float* gradOutput, const float* weight,
                        float* gradInput, Tensor& workspace) {
  const ConvolutionShape t = gradInputShape(s);
  const int parts = planesParts(device, t);
  workspace.resize_({parts * gridFloats(t) + s.outPlanes * rowsOf(s)}, device);
  float* turned = workspace.data() + parts * gridFloats(t);
  turnedKernels(s, weight, turned);
  planesForward(device, t, parts, workspace.data(), gradOutput, turned, nullptr, gradInput);
}

// Note [Products over the taps]
// Where a layer of unfoldedForBf16 has planes in and out in multiples of 16 (a residual network's
// 32 and 64, VGG's), its three passes take AMX's tiles straight from the chunk's padded planes,
// rounded to bfloat16 once (AmxTaps.h), rather than amxGemmRows's products, which pack the nine
// rows of every plane into pairs again for each product. So do the direct route's 3x3 layers of
// stride 2 (a residual network's that halve its planes), read from their input's phases (its 1x1
// layers of stride 2 would read four times the input they need: they keep the direct route):
// a phase of the padded planes, (yp % 2, xp % 2), holds the pixels (yp, xp) at
// (yp / 2, xp / 2), and tap (ky, kx) reads phase (ky % 2, kx % 2) from (ky / 2, kx / 2) on, as a
// layer of stride 1 reads its padded planes (PhasePlanes). The taps' grid is a phase plane's
// (the padded plane's for stride 1), a chunk of samples' planes one after another; output (oy, ox)
// of sample n is the grid's position n x plane + oy x grid width + ox, and tap t reads the grid
// from its offset on (tapOffsets). The product's sums at the grid's extra positions (past each
// output row, and the rows after a sample's) are dropped.
// - The forward's B tiles are the pair planes (planes 2p and 2p + 1 side by side) from each tap's
//   offset, its A tiles each tap's weights, packed in pairs once a call.
// - The gradInput of a layer of stride 1 is the forward of gradInputShape(s) with the turned
//   kernels. Of a layer of stride 2, phase (py, px) of the padded gradInput sums at (y2, x2), over
//   the taps (ky, kx) = (py + 2 dy, px + 2 dx), gradOutput at (y2 - dy, x2 - dx) times the tap's
//   weights: a product over the phase's taps from gradOutput's pair planes on the grid, read from
//   -(dy x grid width + dx) on, where the grid's extra positions (at least one row and column a
//   sample: tapsRoute) and a margin before the first sample are zeros; then fromPhases.
// - The weight gradient's A tiles are the bfloat16 planes from each tap's offset, its B tiles the
//   chunk's gradOutput on the grid, paired along the grid's positions once a chunk (pairColumns),
//   its zeros at the grid's extra positions; each part sums [taps][in][out] from zero, added to
//   gradWeight in part order times the scale.
// The sums' order is a tap's pairs of planes, tap by tap.
int64_t tapsOf(const ConvolutionShape& s) { return s.kH * s.kW; }
int64_t phasesOf(const ConvolutionShape& s) { return s.dH * s.dW; }
bool tapsRoute(const ConvolutionShape& s) {
  if (s.inPlanes % 16 != 0 || s.outPlanes % 16 != 0) return false;
  if (unfoldedForBf16(s)) return true;
  // Stride 2 with the rows and columns of zeros that the gradInput's phases read past a sample.
  const bool strideTwo = s.dH == 2 && s.dW == 2 && s.kH > 1 && directFits(s) &&
                         gridHeight(s) - s.outHeight >= (s.kH - 1) / 2 && gridWidth(s) - s.outWidth >= (s.kW - 1) / 2;
  return strideTwo && blas::bf16Products() && amxGemmRuns();
}

// Lanes of a phase of a chunk's planes (values of a bfloat16 plane): its samples' phase planes,
// then what the taps read past them ((kW - 1) / dW, and up to a block of 32 columns), a multiple of
// 16; a plane's phases one after another.
int64_t phaseLanes(const ConvolutionShape& s) {
  return (planesChunkOf(s) * gridPlane(s) + (s.kW - 1) / s.dW + 32 + 15) / 16 * 16;
}
int64_t tapLanes(const ConvolutionShape& s) { return phasesOf(s) * phaseLanes(s); }
PhasePlanes phasePlanesOf(const ConvolutionShape& s) {
  return PhasePlanes{s.dW, s.padH, s.padW, phaseLanes(s), gridWidth(s)};
}

// offsets[t] for tap t = ky kW + kx (im2col's order of a plane's rows): its phase's lanes, then
// (ky / dH) x grid width + kx / dW.
void tapOffsets(const ConvolutionShape& s, std::vector<int64_t>& offsets) {
  offsets.resize(static_cast<size_t>(tapsOf(s)));
  for (int64_t ky = 0; ky < s.kH; ++ky)
    for (int64_t kx = 0; kx < s.kW; ++kx)
      offsets[ky * s.kW + kx] = ((ky % s.dH) * s.dW + kx % s.dW) * phaseLanes(s) + ky / s.dH * gridWidth(s) + kx / s.dW;
}

// x rounded to bfloat16 as vcvtne2ps2bf16 rounds the planes: to nearest even, denormals to a zero
// of their sign.
inline uint32_t tapBfloat16(float x) {
  const uint32_t bits = math::bitsOfFloat(x);
  return math::floatToBfloat16((bits & 0x7f800000u) == 0 ? math::floatFromBits(bits & 0x80000000u) : x);
}

// a[(t m + i) pairs + p] = the pair of weight(i, 2p, t) and weight(i, 2p + 1, t), rounded as
// tapBfloat16 rounds.
template <typename Weight>
void packTapPairs(int64_t m, int64_t pairs, int64_t taps, Weight weight, uint32_t* a) {
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < pairs; ++p)
        a[(t * m + i) * pairs + p] = tapBfloat16(weight(i, 2 * p, t)) | tapBfloat16(weight(i, 2 * p + 1, t)) << 16;
}

int64_t tapWeightLanes(const ConvolutionShape& s) { return tapsOf(s) * s.outPlanes * (s.inPlanes / 2); }

// A part's work for tapsForward: the chunk's pair planes, then the product on the grid.
int64_t tapsFloats(const ConvolutionShape& s) {
  return s.inPlanes / 2 * tapLanes(s) + s.outPlanes * gridColumns(s, planesChunkOf(s));
}

// The outputs of the batch from the taps' packed weights (packTapPairs), the chunks split over
// `parts` parts; `work` holds parts x tapsFloats(s).
void tapsForward(const Device& device, const ConvolutionShape& s, int parts, const uint32_t* weights, float* work,
                 const float* input, const float* bias, float* output) {
  const int64_t chunk = planesChunkOf(s), lanes = tapLanes(s), plane = gridPlane(s);
  const int64_t inSample = s.inPlanes * s.height * s.width, outSample = s.outPlanes * positionsOf(s);
  parallelFor(device, parts, [&](int p) {
    float* part = work + p * tapsFloats(s);
    uint32_t* planes = reinterpret_cast<uint32_t*>(part);
    float* grid = part + s.inPlanes / 2 * lanes;
    // The planes' borders and what lies past them stay zero: a chunk writes the interiors alone.
    fillRow(part, s.inPlanes / 2 * lanes, 0.f);
    thread_local std::vector<int64_t> offsets;
    tapOffsets(s, offsets);
    const Range r = partRange(planesChunks(s), parts, p);
    for (int64_t first = r.begin * chunk; first < std::min(s.batch, r.end * chunk); first += chunk) {
      const int64_t count = std::min(chunk, s.batch - first), cols = gridColumns(s, count);
      for (int64_t n = 0; n < count; ++n)
        pairPlanes(input + (first + n) * inSample, s.inPlanes, s.height, s.width, phasePlanesOf(s), planes + n * plane,
                   lanes);
      amxTapsProduct(s.outPlanes, cols, s.inPlanes / 2, tapsOf(s), weights, planes, lanes, offsets.data(), grid, cols);
      gridToOutput(s, grid, cols, plane, gridWidth(s), count, bias, output + first * outSample);
    }
  });
}

// The forward of t's layer over the batch, its taps' weights packed from weight(i, k, tap), i an
// output plane and k an input plane of t's (packTapPairs).
template <typename Weight>
void tapsRun(const Device& device, const ConvolutionShape& t, Weight weight, const float* input, const float* bias,
             float* output, Tensor& workspace) {
  const int parts = planesParts(device, t);
  workspace.resize_({parts * tapsFloats(t) + tapWeightLanes(t)}, device);
  uint32_t* packed = reinterpret_cast<uint32_t*>(workspace.data() + parts * tapsFloats(t));
  packTapPairs(t.outPlanes, t.inPlanes / 2, tapsOf(t), weight, packed);
  tapsForward(device, t, parts, packed, workspace.data(), input, bias, output);
}

void tapsUpdateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                      const float* bias, float* output, Tensor& workspace) {
  const int64_t taps = tapsOf(s), rows = rowsOf(s);
  tapsRun(
      device, s, [&](int64_t o, int64_t c, int64_t t) { return weight[o * rows + c * taps + t]; }, input, bias, output,
      workspace);
}

// The zeros before the first sample's gradOutput that a phase's taps read, -(dy x grid width + dx)
// from the first position; then a pair plane of gradOutput on the grid, and what the last block of
// 32 columns reads past it.
int64_t phaseMargin(const ConvolutionShape& s) {
  return ((s.kH - 1) / 2 * gridWidth(s) + (s.kW - 1) / 2 + 15) / 16 * 16;
}
int64_t gradOutputLanes(const ConvolutionShape& s) {
  return (phaseMargin(s) + planesChunkOf(s) * gridPlane(s) + 32 + 15) / 16 * 16;
}
// A part's work for phasesGradInput: gradOutput's pair planes, then the gradInput's phases,
// [inPlanes][phases][phaseLanes].
int64_t phasesFloats(const ConvolutionShape& s) {
  return s.outPlanes / 2 * gradOutputLanes(s) + s.inPlanes * tapLanes(s);
}

// The taps of a layer of stride 2 by the gradInput's phases (py, px), one phase after another: phase
// py 2 + px's from first[py 2 + px] to first[py 2 + px + 1], each tap's kernel position and offset;
// the calling thread's.
struct PhaseTaps {
  std::vector<int64_t> tapAt, offsets, first;
};

const PhaseTaps& phaseTaps(const ConvolutionShape& s) {
  thread_local PhaseTaps taps;
  taps.tapAt.clear();
  taps.offsets.clear();
  taps.first.clear();
  for (int64_t py = 0; py < 2; ++py)
    for (int64_t px = 0; px < 2; ++px) {
      taps.first.push_back(static_cast<int64_t>(taps.tapAt.size()));
      for (int64_t dy = 0; py + 2 * dy < s.kH; ++dy)
        for (int64_t dx = 0; px + 2 * dx < s.kW; ++dx) {
          taps.tapAt.push_back((py + 2 * dy) * s.kW + px + 2 * dx);
          taps.offsets.push_back(-(dy * gridWidth(s) + dx));
        }
    }
  taps.first.push_back(tapsOf(s));
  return taps;
}

// The gradInput of a layer of stride 2 from its phases (Note [Products over the taps]).
void phasesGradInput(const Device& device, const ConvolutionShape& s, const float* gradOutput, const float* weight,
                     float* gradInput, Tensor& workspace) {
  const int64_t taps = tapsOf(s), rows = rowsOf(s), chunk = planesChunkOf(s), plane = gridPlane(s);
  const int64_t lanes = gradOutputLanes(s), margin = phaseMargin(s), pairs = s.outPlanes / 2;
  const int64_t inSample = s.inPlanes * s.height * s.width, outSample = s.outPlanes * positionsOf(s);
  const int parts = planesParts(device, s);
  workspace.resize_({parts * phasesFloats(s) + tapWeightLanes(s)}, device);
  uint32_t* packed = reinterpret_cast<uint32_t*>(workspace.data() + parts * phasesFloats(s));
  const std::vector<int64_t>& tapAt = phaseTaps(s).tapAt;
  packTapPairs(
      s.inPlanes, pairs, taps,
      [&](int64_t c, int64_t o, int64_t t) { return weight[o * rows + c * taps + tapAt[static_cast<size_t>(t)]]; },
      packed);
  parallelFor(device, parts, [&](int p) {
    float* part = workspace.data() + p * phasesFloats(s);
    uint32_t* planes = reinterpret_cast<uint32_t*>(part);
    float* phases = part + pairs * lanes;
    // The margin and the grid's extra positions stay zero: a chunk writes gradOutput's positions.
    fillRow(part, pairs * lanes, 0.f);
    const PhaseTaps& phase = phaseTaps(s);
    const Range r = partRange(planesChunks(s), parts, p);
    for (int64_t k = r.begin; k < r.end; ++k) {
      const int64_t begin = k * chunk, count = std::min(chunk, s.batch - begin);
      for (int64_t n = 0; n < count; ++n)
        pairPlanes(gradOutput + (begin + n) * outSample, s.outPlanes, s.outHeight, s.outWidth,
                   PhasePlanes{1, 0, 0, 0, gridWidth(s)}, planes + margin + n * plane, lanes);
      for (int64_t ph = 0; ph < 4; ++ph) {
        const int64_t first = phase.first[static_cast<size_t>(ph)];
        amxTapsProduct(s.inPlanes, count * plane, pairs, phase.first[static_cast<size_t>(ph + 1)] - first,
                       packed + first * s.inPlanes * pairs, planes + margin, lanes, phase.offsets.data() + first,
                       phases + ph * phaseLanes(s), tapLanes(s));
      }
      for (int64_t n = 0; n < count; ++n)
        fromPhases(phases + n * plane, tapLanes(s), phasePlanesOf(s), s.inPlanes, s.height, s.width,
                   gradInput + (begin + n) * inSample);
    }
  });
}

// gradInput: for stride 1 the forward of gradInputShape(s), tap t of the turned kernel tap
// taps - 1 - t; for stride 2 phasesGradInput.
void tapsUpdateGradInput(const Device& device, const ConvolutionShape& s, const float* gradOutput, const float* weight,
                         float* gradInput, Tensor& workspace) {
  if (s.dH == 2) return phasesGradInput(device, s, gradOutput, weight, gradInput, workspace);
  const int64_t taps = tapsOf(s), rows = rowsOf(s);
  tapsRun(
      device, gradInputShape(s),
      [&](int64_t c, int64_t o, int64_t t) { return weight[o * rows + c * taps + taps - 1 - t]; }, gradOutput, nullptr,
      gradInput, workspace);
}

// The grid's columns of a chunk rounded up to pairColumns's blocks of 32.
int64_t pairedColumns(const ConvolutionShape& s) { return (gridColumns(s, planesChunkOf(s)) + 31) / 32 * 32; }

// A part's work for tapsAccGradParameters: the chunk's bfloat16 planes, its gradOutput on the grid
// and paired, then the part's sums [taps][in][out] and its bias gradient.
int64_t tapsGradientFloats(const ConvolutionShape& s) {
  return s.inPlanes * tapLanes(s) / 2 + s.outPlanes * gridColumns(s, planesChunkOf(s)) +
         pairedColumns(s) / 2 * s.outPlanes + tapsOf(s) * s.inPlanes * s.outPlanes + s.outPlanes;
}

void tapsAccGradParameters(const Device& device, const ConvolutionShape& s, const float* input, const float* gradOutput,
                           float* gradWeight, float* gradBias, float scale, Tensor& workspace) {
  const int64_t chunk = planesChunkOf(s), lanes = tapLanes(s), taps = tapsOf(s), rows = rowsOf(s);
  const int64_t plane = gridPlane(s), ldGrid = gridColumns(s, chunk);
  const int64_t inSample = s.inPlanes * s.height * s.width, positions = positionsOf(s);
  const int64_t outSample = s.outPlanes * positions, sums = taps * s.inPlanes * s.outPlanes;
  const int parts = planesParts(device, s);
  workspace.resize_({parts * tapsGradientFloats(s)}, device);
  float* base = workspace.data();
  auto partSums = [&](int p) {
    return base + p * tapsGradientFloats(s) + s.inPlanes * lanes / 2 + s.outPlanes * ldGrid +
           pairedColumns(s) / 2 * s.outPlanes;
  };
  parallelFor(device, parts, [&](int p) {
    float* part = base + p * tapsGradientFloats(s);
    uint16_t* planes = reinterpret_cast<uint16_t*>(part);
    float* staged = part + s.inPlanes * lanes / 2;
    uint32_t* paired = reinterpret_cast<uint32_t*>(staged + s.outPlanes * ldGrid);
    float* gw = partSums(p);
    float* gb = p == 0 ? gradBias : gw + sums;
    // The planes' borders, what lies past them and the grid's extra positions stay zero: a chunk
    // writes the planes' interiors and gradOutput's positions alone.
    fillRow(part, s.inPlanes * lanes / 2 + s.outPlanes * ldGrid, 0.f);
    fillRow(gw, sums + s.outPlanes, 0.f);
    thread_local std::vector<int64_t> offsets;
    tapOffsets(s, offsets);
    // Every part has a chunk at least: planesParts takes no more parts than chunks.
    const Range r = partRange(planesChunks(s), parts, p);
    for (int64_t k = r.begin; k < r.end; ++k) {
      const int64_t first = k * chunk, count = std::min(chunk, s.batch - first), cols = gridColumns(s, count);
      for (int64_t n = 0; n < count; ++n) {
        const float* g = gradOutput + (first + n) * outSample;
        bf16Planes(input + (first + n) * inSample, s.inPlanes, s.height, s.width, phasePlanesOf(s), planes + n * plane,
                   lanes);
        copyPlanes(g, positions, s.outWidth, staged + n * plane, ldGrid, gridWidth(s), s.outPlanes, s.outHeight,
                   s.outWidth, nullptr);
        if (gradBias) addSampleBiasGradient(g, positions, scale, gb, 0, s.outPlanes);
      }
      pairColumns(staged, ldGrid, s.outPlanes, cols, paired);
      amxTapsGradient(s.inPlanes, s.outPlanes, cols, taps, planes, lanes, offsets.data(), paired, gw);
    }
  });
  for (int p = 0; p < parts; ++p) {
    const float* gw = partSums(p);
    for (int64_t o = 0; o < s.outPlanes; ++o)
      for (int64_t c = 0; c < s.inPlanes; ++c)
        for (int64_t t = 0; t < taps; ++t)
          gradWeight[o * rows + c * taps + t] += scale * gw[(t * s.inPlanes + c) * s.outPlanes + o];
    if (gradBias && p > 0) addRow(gw + sums, gradBias, s.outPlanes);
  }
}

void cpuUpdateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                     const float* bias, float* output, Tensor& workspace) {
  if (tapsRoute(s)) {
    countRoute(Route::convolutionUnfolded, Pass::forward);
    return tapsUpdateOutput(device, s, input, weight, bias, output, workspace);
  }
  if (shallowFits(s)) {
    countRoute(Route::convolutionShallow, Pass::forward);
    return shallowUpdateOutput(device, s, input, weight, bias, output, workspace);
  }
  if (winogradFits(s) && !unfoldedForBf16(s)) {
    countRoute(Route::convolutionWinograd, Pass::forward);
    return winogradUpdateOutput(device, s, input, weight, bias, output, workspace);
  }
  if (directFits(s) && !unfoldedForBf16(s)) {
    countRoute(Route::convolutionDirect, Pass::forward);
    return directUpdateOutput(device, s, input, weight, bias, output, workspace);
  }
  countRoute(Route::convolutionUnfolded, Pass::forward);
  if (unfoldedForBf16(s)) return planesUpdateOutput(device, s, input, weight, bias, output, workspace);
  const int64_t positions = positionsOf(s), chunk = chunkOf(s), rows = groupRowsOf(s), planes = groupPlanesOf(s);
  const int64_t inSample = s.inPlanes * s.height * s.width, outSample = s.outPlanes * positions;
  const int parts = parallelPartsOf(device, s);
  float* columnsBase = workspaceFor(device, s, parts, false, workspace);
  parallelFor(device, parts, [&](int p) {
    float* columns = columnsBase + p * partFloats(s);
    float* padded = columns + columnFloats(s);
    float* staged = padded + paddedFloats(s);
    const Range r = samplesOf(s, parts, p);
    for (int64_t first = r.begin; first < r.end; first += chunk) {
      const int64_t count = std::min(chunk, r.end - first), cols = count * positions;
      im2col(s, input + first * inSample, count, columns, padded);
      if (grouped(s)) {
        // staged[out, cols] = W[out, rows] * columns[rows, cols], group by group (W's rows and
        // columns' rows of group g to staged's rows of g); then output[n] = bias + its part.
        for (int64_t g = 0; g < s.groups; ++g)
          blas::gemm(false, false, planes, cols, rows, 1.f, weight + g * planes * rows, rows, columns + g * rows * cols,
                     cols, 0.f, staged + g * planes * cols, cols);
        for (int64_t n = 0; n < count; ++n)
          for (int64_t o = 0; o < s.outPlanes; ++o) {
            const float* from = staged + o * cols + n * positions;
            float* y = output + (first + n) * outSample + o * positions;
            const float b = bias ? bias[o] : 0.f;
            for (int64_t i = 0; i < positions; ++i) y[i] = b + from[i];
          }
        continue;
      }
      for (int64_t n = 0; n < count; ++n) {
        // output[n] = bias + W[out, rows] * columns[rows, sample n's positions], group by group
        float* y = output + (first + n) * outSample;
        for (int64_t o = 0; o < s.outPlanes; ++o) fillRow(y + o * positions, positions, bias ? bias[o] : 0.f);
        for (int64_t g = 0; g < s.groups; ++g)
          blas::gemm(false, false, planes, positions, rows, 1.f, weight + g * planes * rows, rows,
                     columns + g * rows * cols + n * positions, cols, 1.f, y + g * planes * positions, positions);
      }
    }
  });
}

void cpuUpdateGradInput(const Device& device, const ConvolutionShape& s, const float* gradOutput, const float* weight,
                        float* gradInput, Tensor& workspace) {
  if (tapsRoute(s)) {
    countRoute(Route::convolutionUnfolded, Pass::gradInput);
    return tapsUpdateGradInput(device, s, gradOutput, weight, gradInput, workspace);
  }
  if (winogradFits(s) && !unfoldedForBf16(s)) {
    countRoute(Route::convolutionWinograd, Pass::gradInput);
    return winogradUpdateGradInput(device, s, gradOutput, weight, gradInput, workspace);
  }
  if (directGradInputFits(s) && !unfoldedForBf16(s)) {
    countRoute(Route::convolutionDirect, Pass::gradInput);
    return directUpdateGradInput(device, s, gradOutput, weight, gradInput, workspace);
  }
  countRoute(Route::convolutionUnfolded, Pass::gradInput);
  // As the forward of the turned kernels where that has no more input planes than output planes
  // (measured: faster than col2im on VGG's and the residual network's layers of as many planes out
  // as in, slower on 32 -> 64), or where a sample's columns outgrow kGroupedChunkBytes.
  if (unfoldedForBf16(s) && (s.outPlanes <= s.inPlanes || bigSamples(gradInputShape(s))))
    return gradInputAsForward(device, s, gradOutput, weight, gradInput, workspace);
  const int64_t positions = positionsOf(s), chunk = chunkOf(s), rows = groupRowsOf(s), planes = groupPlanesOf(s);
  const int64_t inSample = s.inPlanes * s.height * s.width, outSample = s.outPlanes * positions;
  const int parts = parallelPartsOf(device, s);
  float* columnsBase = workspaceFor(device, s, parts, false, workspace);
  parallelFor(device, parts, [&](int p) {
    float* columns = columnsBase + p * partFloats(s);
    float* padded = columns + columnFloats(s);
    float* staged = padded + paddedFloats(s);
    const Range r = samplesOf(s, parts, p);
    for (int64_t first = r.begin; first < r.end; first += chunk) {
      const int64_t count = std::min(chunk, r.end - first), cols = count * positions;
      if (grouped(s)) {
        // gradColumns[rows, cols] = W[out, rows]^T * the chunk's gradOutput staged as [out, cols],
        // group by group
        for (int64_t n = 0; n < count; ++n) stage(s, gradOutput + (first + n) * outSample, n, count, staged);
        for (int64_t g = 0; g < s.groups; ++g)
          blas::gemm(true, false, rows, cols, planes, 1.f, weight + g * planes * rows, rows, staged + g * planes * cols,
                     cols, 0.f, columns + g * rows * cols, cols);
      } else {
        // gradColumns[rows, sample n's positions] = W[out, rows]^T * gradOutput[n][out, positions],
        // group by group
        for (int64_t n = 0; n < count; ++n)
          for (int64_t g = 0; g < s.groups; ++g)
            blas::gemm(true, false, rows, positions, planes, 1.f, weight + g * planes * rows, rows,
                       gradOutput + (first + n) * outSample + g * planes * positions, positions, 0.f,
                       columns + g * rows * cols + n * positions, cols);
      }
      col2im(s, columns, count, gradInput + first * inSample, padded);
    }
  });
}

// Whether accGradParameters sums the weight gradient transposed, [rows, outPlanes]: for wide
// output planes OpenBLAS multiplies that shape (many rows by few columns) faster than its
// transpose, for narrow ones slower.
bool transposedGradient(const ConvolutionShape& s) { return !grouped(s); }

void cpuAccGradParameters(const Device& device, const ConvolutionShape& s, const float* input, const float* gradOutput,
                          float* gradWeight, float* gradBias, float scale, Tensor& workspace) {
  if (tapsRoute(s)) {
    countRoute(Route::convolutionUnfolded, Pass::gradParameters);
    return tapsAccGradParameters(device, s, input, gradOutput, gradWeight, gradBias, scale, workspace);
  }
  if (directWeightGradientFits(s) && !unfoldedForBf16(s)) {
    countRoute(Route::convolutionDirect, Pass::gradParameters);
    return directAccGradParameters(device, s, input, gradOutput, gradWeight, gradBias, scale, workspace);
  }
  if (winogradFits(s) && !unfoldedForBf16(s)) {
    countRoute(Route::convolutionWinograd, Pass::gradParameters);
    winogradAccGradParameters(device, s, input, gradOutput, gradWeight, scale, workspace);
    // The bias gradient as the unfolded route adds it on one thread, sample by sample, the planes
    // on the device's threads.
    if (gradBias)
      parallelRanges(device, s.outPlanes, 1, [&](int64_t begin, int64_t end) {
        for (int64_t n = 0; n < s.batch; ++n)
          addSampleBiasGradient(gradOutput + n * s.outPlanes * positionsOf(s), positionsOf(s), scale, gradBias, begin,
                                end);
      });
    return;
  }
  if (unfoldedForBf16(s)) {
    countRoute(Route::convolutionUnfolded, Pass::gradParameters);
    return planesAccGradParameters(device, s, input, gradOutput, gradWeight, gradBias, scale, workspace);
  }
  const int64_t positions = positionsOf(s), chunk = chunkOf(s), rows = groupRowsOf(s), planes = groupPlanesOf(s);
  const int64_t inSample = s.inPlanes * s.height * s.width, outSample = s.outPlanes * positions;
  const bool transposed = transposedGradient(s);
  countRoute(Route::convolutionUnfolded, Pass::gradParameters);
  const int parts = parallelPartsOf(device, s);
  float* columnsBase = workspaceFor(device, s, parts, true, workspace);
  float* partGradients = columnsBase + parts * partFloats(s);
  // Where part p sums its weight gradient: the module's own for part 0 unless transposed, else
  // its workspace, summed from zero and added to the module's below, in part order. The bias
  // gradients of parts after the first follow their weight gradients.
  auto partWeight = [&](int p) { return p == 0 && !transposed ? gradWeight : partGradients + p * gradientFloats(s); };
  parallelFor(device, parts, [&](int p) {
    float* columns = columnsBase + p * partFloats(s);
    float* padded = columns + columnFloats(s);
    float* gw = partWeight(p);
    float* gb = p == 0 ? gradBias : gw + s.outPlanes * rows;
    if (gw != gradWeight) fillRow(gw, p == 0 ? s.outPlanes * rows : gradientFloats(s), 0.f);
    const Range r = samplesOf(s, parts, p);
    for (int64_t first = r.begin; first < r.end; first += chunk) {
      const int64_t count = std::min(chunk, r.end - first), cols = count * positions;
      im2col(s, input + first * inSample, count, columns, padded);
      // gradWeight[out, rows] += scale * gradOutput[n][out, positions] * columns[rows, sample n's positions]^T,
      // or its transpose [rows, out], group by group; gradBias[out] += scale * the sum of
      // gradOutput[n][out], while that sample is in the cache.
      for (int64_t n = 0; n < count; ++n) {
        const float* gn = gradOutput + (first + n) * outSample;
        for (int64_t g = 0; g < s.groups; ++g) {
          const float* x = columns + g * rows * cols + n * positions;
          if (transposed)
            blas::gemm(false, true, rows, planes, positions, scale, x, cols, gn + g * planes * positions, positions,
                       1.f, gw + g * planes, s.outPlanes);
          else
            blas::gemm(false, true, planes, rows, positions, scale, gn + g * planes * positions, positions, x, cols,
                       1.f, gw + g * planes * rows, rows);
        }
        if (gradBias) addSampleBiasGradient(gn, positions, scale, gb, 0, s.outPlanes);
      }
    }
  });
  for (int p = 0; p < parts; ++p) {
    const float* gw = partWeight(p);
    if (gw == gradWeight) continue;
    if (transposed)
      for (int64_t o = 0; o < s.outPlanes; ++o)
        for (int64_t i = 0; i < rows; ++i) gradWeight[o * rows + i] += gw[i * s.outPlanes + o];
    else
      addRow(gw, gradWeight, s.outPlanes * rows);
    if (gradBias && p > 0) addRow(gw + s.outPlanes * rows, gradBias, s.outPlanes);
  }
}

}  // namespace

ConvolutionKernels convolutionKernels() {
  ConvolutionKernels k{};
  k.updateOutput = &cpuUpdateOutput;
  k.updateGradInput = &cpuUpdateGradInput;
  k.accGradParameters = &cpuAccGradParameters;
  return k;
}

}  // namespace nn::cpu
