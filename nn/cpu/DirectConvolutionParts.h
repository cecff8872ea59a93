// The parts of the direct convolution (DirectConvolution.h) that its AVX-512 and AVX2 forms
// (DirectConvolution.cpp, DirectConvolutionAvx2.cpp) share: the layer as the loops see it, the
// arrangement of the kernels, the padded copies, the interleaving of the stride-2 gradInput's
// classes, the sum of the parts' weight gradients. No vector code: each form's tiles are its own.
// Included by those two files only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "nn/core/ComputeThreads.h"
#include "nn/core/Device.h"
#include "nn/core/Tensor.h"

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
