// The Winograd route of the CPU convolution: per chunk of samples, every 4x4 input block of
// every input plane transformed (v, [16][inPlanes][blocks]), 16 GEMMs with the transformed
// kernels (u, [16][outPlanes][inPlanes]) into m ([16][outPlanes][blocks]), and each m block
// transformed into its 2x2 output block. The batch is cut into chunks from its first sample and
// the chunks into parts, one per compute thread, as the unfolded route does: every sample sees
// the same products whatever the thread count.
#include "nn/cpu/WinogradConvolution.h"

#include <algorithm>
#include <cstring>

#include "nn/cpu/Blas.h"
#include "nn/cpu/Multiversion.h"
#include "nn/math/Winograd.h"
#include "nn/runtime/ComputeThreads.h"

namespace nn::cpu {

namespace {

// Transformed blocks and products of a chunk: small enough to stay in a core's L2 cache (VGG's
// layers ran fastest at 512 KB of the sizes from 256 KB to 4 MB).
constexpr int64_t kChunkBytes = int64_t{512} << 10;

// Eight floats, one of each of eight blocks side by side (GCC's vector extension: AVX2 or
// AVX-512 registers, as the form of Multiversion.h that runs).
typedef float Lanes __attribute__((vector_size(32)));
constexpr int64_t kLanes = 8;

inline Lanes load(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, Lanes v) { std::memcpy(p, &v, sizeof v); }
// The first n lanes of p (n < kLanes), the others 0; and their store.
inline Lanes loadSome(const float* p, int64_t n) {
  float lanes[kLanes] = {};
  for (int64_t l = 0; l < n; ++l) lanes[l] = p[l];
  return load(lanes);
}
inline void storeSome(float* p, Lanes v, int64_t n) {
  float lanes[kLanes];
  store(lanes, v);
  for (int64_t l = 0; l < n; ++l) p[l] = lanes[l];
}
// p[0], p[2], ..., p[14]: the same column of eight blocks that lie 2 floats apart.
inline Lanes everyOther(const float* p) {
  return __builtin_shufflevector(load(p), load(p + kLanes), 0, 2, 4, 6, 8, 10, 12, 14);
}

// One 3x3 cross-correlation of stride 1: `inPlanes` planes of height x width in, padded by
// `pad` on every side, `outPlanes` planes of outHeight x outWidth out.
struct Correlation {
  int64_t batch, inPlanes, outPlanes, height, width, pad, outHeight, outWidth;

  int64_t blocksY() const { return (outHeight + 1) / 2; }
  int64_t blocksX() const { return (outWidth + 1) / 2; }
  int64_t blocksPerSample() const { return blocksY() * blocksX(); }
  // A zero-padded copy of an input plane under every block, with room for the vectors that
  // read eight blocks at a time past the last.
  int64_t paddedWidth() const { return 2 * blocksX() + 2 + 2 * kLanes; }
  int64_t paddedFloats() const { return (2 * blocksY() + 2) * paddedWidth(); }
  // Samples per chunk: as many as fit kChunkBytes, at least one.
  int64_t chunk() const {
    const int64_t sampleBytes = 16 * (inPlanes + outPlanes) * blocksPerSample() * int64_t{sizeof(float)};
    return std::max<int64_t>(1, std::min(batch, kChunkBytes / sampleBytes));
  }
  // The 16 matrices of v (of m) of a chunk of `count` samples lie this far apart: a little more
  // than their size, so that the 16 values of a block, written (read) together, do not fall
  // into the same sets of the L1 cache, where they would evict each other.
  int64_t stride(int64_t planes, int64_t count) const { return planes * count * blocksPerSample() + 2 * kLanes; }
  // A part's padded plane, then its blocks v and products m.
  int64_t partFloats() const { return paddedFloats() + 16 * (stride(inPlanes, chunk()) + stride(outPlanes, chunk())); }
};

// The compute threads' parts of the batch: whole chunks, counted from the first sample.
int partsOf(const Device& device, const Correlation& p) {
  return parallelParts(device, (p.batch + p.chunk() - 1) / p.chunk());
}

// On each part's thread: start(part), then body(part, first, count) for each of its chunks.
template <typename Start, typename Body>
void forEachChunk(const Device& device, const Correlation& p, int parts, Start start, Body body) {
  const int64_t chunk = p.chunk();
  parallelFor(device, parts, [&](int part) {
    start(part);
    const Range chunks = partRange((p.batch + chunk - 1) / chunk, parts, part);
    for (int64_t first = chunks.begin * chunk, end = std::min(p.batch, chunks.end * chunk); first < end; first += chunk)
      body(part, first, std::min(chunk, end - first));
  });
}

// The 16 transformed values of each Size x Size block of `count` samples of `planes` planes of
// height x width (each copied into `padded`, rowLength floats a row, at (pad, pad); the caller has
// zeroed the rest), blocks 2 floats apart, eight of a row at a time: transform(block, values),
// the values written to out[xi][plane][block], the 16 matrices planeStride apart.
template <int Size, typename Transform>
__attribute__((always_inline)) inline void transformBlocks(const Correlation& p, int64_t planes, const float* src,
                                                           int64_t height, int64_t width, int64_t pad, int64_t count,
                                                           float* padded, int64_t rowLength, float* out,
                                                           int64_t planeStride, Transform transform) {
  const int64_t blocks = count * p.blocksPerSample(), blocksX = p.blocksX();
  for (int64_t n = 0; n < count; ++n)
    for (int64_t c = 0; c < planes; ++c) {
      const float* plane = src + (n * planes + c) * height * width;
      for (int64_t y = 0; y < height; ++y)
        std::memcpy(padded + (y + pad) * rowLength + pad, plane + y * width, width * sizeof(float));
      float* values = out + c * blocks + n * p.blocksPerSample();
      for (int64_t by = 0; by < p.blocksY(); ++by, values += blocksX)
        for (int64_t bx = 0; bx < blocksX; bx += kLanes) {
          const float* corner = padded + 2 * by * rowLength + 2 * bx;
          Lanes block[Size * Size], t[16];
          for (int64_t i = 0; i < Size; ++i)
            for (int64_t j = 0; j < Size; ++j) block[Size * i + j] = everyOther(corner + i * rowLength + j);
          transform(block, t);
          const int64_t lanes = std::min(kLanes, blocksX - bx);
          for (int64_t xi = 0; xi < 16; ++xi)
            if (lanes == kLanes)
              store(values + bx + xi * planeStride, t[xi]);
            else
              storeSome(values + bx + xi * planeStride, t[xi], lanes);
        }
    }
}

// v[xi][c][block] = B^T d B for the 4x4 input blocks of `count` samples.
void transformInput(const Correlation& p, const float* input, int64_t count, float* padded, float* v) {
  widest([&]() NN_CPU_INLINE {
    transformBlocks<4>(p, p.inPlanes, input, p.height, p.width, p.pad, count, padded, p.paddedWidth(), v,
                       p.stride(p.inPlanes, count), [](const Lanes* d, Lanes* t) { math::winogradInput(d, t); });
  });
}

// The output blocks of `count` samples from m[xi][o][block], each plus its plane's bias, eight
// blocks of a row at a time.
void transformOutput(const Correlation& p, const float* m, int64_t count, const float* bias, float* output) {
  widest([&]() NN_CPU_INLINE {
    const int64_t blocks = count * p.blocksPerSample(), planeStride = p.stride(p.outPlanes, count);
    const int64_t outH = p.outHeight, outW = p.outWidth, blocksX = p.blocksX();
    for (int64_t n = 0; n < count; ++n)
      for (int64_t o = 0; o < p.outPlanes; ++o) {
        float* plane = output + (n * p.outPlanes + o) * outH * outW;
        const float* in = m + o * blocks + n * p.blocksPerSample();
        const float b = bias ? bias[o] : 0.f;
        for (int64_t by = 0; by < p.blocksY(); ++by, in += blocksX)
          for (int64_t bx = 0; bx < blocksX; bx += kLanes) {
            const int64_t lanes = std::min(kLanes, blocksX - bx);
            Lanes s[16], y[4];
            for (int64_t xi = 0; xi < 16; ++xi)
              s[xi] = lanes == kLanes ? load(in + bx + xi * planeStride) : loadSome(in + bx + xi * planeStride, lanes);
            math::winogradOutput(s, y);
            // Row i of the eight blocks: their left columns y[2i] and right columns y[2i + 1],
            // interleaved into 16 floats.
            for (int64_t i = 0; i < 2 && 2 * by + i < outH; ++i) {
              float* row = plane + (2 * by + i) * outW + 2 * bx;
              const Lanes left = b + __builtin_shufflevector(y[2 * i], y[2 * i + 1], 0, 8, 1, 9, 2, 10, 3, 11);
              const Lanes right = b + __builtin_shufflevector(y[2 * i], y[2 * i + 1], 4, 12, 5, 13, 6, 14, 7, 15);
              const int64_t columns = std::min(2 * kLanes, outW - 2 * bx);
              if (columns == 2 * kLanes) {
                store(row, left);
                store(row + kLanes, right);
              } else {
                storeSome(row, left, std::min(kLanes, columns));
                if (columns > kLanes) storeSome(row + kLanes, right, columns - kLanes);
              }
            }
          }
      }
  });
}

// output = bias + the correlation of input with the kernels whose transforms are u.
void correlate(const Device& device, const Correlation& p, const float* input, const float* u, const float* bias,
               float* output, float* workspace) {
  const int64_t inSample = p.inPlanes * p.height * p.width, outSample = p.outPlanes * p.outHeight * p.outWidth;
  auto paddedOf = [&](int part) { return workspace + part * p.partFloats(); };
  forEachChunk(
      device, p, partsOf(device, p),
      [&](int part) { std::fill(paddedOf(part), paddedOf(part) + p.paddedFloats(), 0.f); },
      [&](int part, int64_t first, int64_t count) {
        float* padded = paddedOf(part);
        float* v = padded + p.paddedFloats();
        const int64_t blocks = count * p.blocksPerSample();
        const int64_t vStride = p.stride(p.inPlanes, count), mStride = p.stride(p.outPlanes, count);
        float* m = v + 16 * vStride;
        transformInput(p, input + first * inSample, count, padded, v);
        // m[xi][out, blocks] = u[xi][out, in] * v[xi][in, blocks]
        for (int64_t xi = 0; xi < 16; ++xi)
          blas::gemm(false, false, p.outPlanes, blocks, p.inPlanes, 1.f, u + xi * p.outPlanes * p.inPlanes, p.inPlanes,
                     v + xi * vStride, blocks, 0.f, m + xi * mStride, blocks);
        transformOutput(p, m, count, bias, output + first * outSample);
      });
}

// The transformed kernels u[xi][o][c] of kernels[o][c] (3x3 each); `turned`: of the kernels
// kernels[c][o] turned by 180 degrees (the gradInput's).
void transformKernels(const float* kernels, int64_t outPlanes, int64_t inPlanes, bool turned, float* u) {
  for (int64_t o = 0; o < outPlanes; ++o)
    for (int64_t c = 0; c < inPlanes; ++c) {
      float g[9], t[16];
      const float* k = kernels + (turned ? c * outPlanes + o : o * inPlanes + c) * 9;
      for (int64_t i = 0; i < 9; ++i) g[i] = turned ? k[8 - i] : k[i];
      math::winogradKernel(g, t);
      for (int64_t xi = 0; xi < 16; ++xi) u[(xi * outPlanes + o) * inPlanes + c] = t[xi];
    }
}

// The workspace: the transformed kernels, then each part's blocks and products.
float* workspaceFor(const Device& device, const Correlation& p, Tensor& workspace) {
  workspace.resize_({16 * p.outPlanes * p.inPlanes + partsOf(device, p) * p.partFloats()}, device);
  return workspace.data();
}

// w[xi][o][block] = A dy A^T for the 2x2 gradOutput blocks of `count` samples, from a copy of
// each plane in `padded` (gradOutputWidth() floats a row, 2 blocksY() rows) whose floats past the
// plane the caller has zeroed: gradOutput is 0 there.
int64_t gradOutputWidth(const Correlation& p) { return 2 * p.blocksX() + 2 * kLanes; }
int64_t gradOutputFloats(const Correlation& p) { return 2 * p.blocksY() * gradOutputWidth(p); }

void transformGradOutput(const Correlation& p, const float* gradOutput, int64_t count, float* padded, float* w) {
  widest([&]() NN_CPU_INLINE {
    transformBlocks<2>(p, p.outPlanes, gradOutput, p.outHeight, p.outWidth, 0, count, padded, gradOutputWidth(p), w,
                       p.stride(p.outPlanes, count),
                       [](const Lanes* dy, Lanes* t) { math::winogradGradOutput(dy, t); });
  });
}

}  // namespace

bool winogradFits(const ConvolutionShape& s) {
  return s.kH == 3 && s.kW == 3 && s.dH == 1 && s.dW == 1 && s.dilH == 1 && s.dilW == 1 && s.groups == 1 &&
         s.padH == s.padW && s.padH <= 2 && s.inPlanes >= 16 && s.outPlanes >= 16 && s.outHeight * s.outWidth >= 256;
}

void winogradUpdateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                          const float* bias, float* output, Tensor& workspace) {
  const Correlation p{s.batch, s.inPlanes, s.outPlanes, s.height, s.width, s.padH, s.outHeight, s.outWidth};
  float* u = workspaceFor(device, p, workspace);
  transformKernels(weight, s.outPlanes, s.inPlanes, false, u);
  correlate(device, p, input, u, bias, output, u + 16 * s.outPlanes * s.inPlanes);
}

void winogradUpdateGradInput(const Device& device, const ConvolutionShape& s, const float* gradOutput,
                             const float* weight, float* gradInput, Tensor& workspace) {
  const Correlation p{s.batch, s.outPlanes, s.inPlanes, s.outHeight, s.outWidth, 2 - s.padH, s.height, s.width};
  float* u = workspaceFor(device, p, workspace);
  transformKernels(weight, s.inPlanes, s.outPlanes, true, u);
  correlate(device, p, gradOutput, u, nullptr, gradInput, u + 16 * s.outPlanes * s.inPlanes);
}

// Each part sums, over its chunks, the products of the transformed gradOutput and input blocks:
// m[xi][o][c] = sum over blocks of w[xi][o][block] v[xi][c][block] (16 GEMMs whose inner
// dimension is the chunk's blocks); the parts' sums are added in part order, and the module's
// weight gradient gets scale times G^T m G.
void winogradAccGradParameters(const Device& device, const ConvolutionShape& s, const float* input,
                               const float* gradOutput, float* gradWeight, float scale, Tensor& workspace) {
  const Correlation p{s.batch, s.inPlanes, s.outPlanes, s.height, s.width, s.padH, s.outHeight, s.outWidth};
  const int64_t inSample = s.inPlanes * s.height * s.width, outSample = s.outPlanes * s.outHeight * s.outWidth;
  const int64_t sums = 16 * s.outPlanes * s.inPlanes;
  const int64_t partFloats = p.partFloats() + gradOutputFloats(p) + sums;
  const int parts = partsOf(device, p);
  workspace.resize_({parts * partFloats}, device);
  float* base = workspace.data();
  // A part's padded input plane, blocks v and w, padded gradOutput plane, and sums m.
  auto paddedOf = [&](int part) { return base + part * partFloats; };
  auto sumsOf = [&](int part) { return paddedOf(part) + p.partFloats() + gradOutputFloats(p); };
  forEachChunk(
      device, p, parts,
      [&](int part) {
        std::fill(paddedOf(part), paddedOf(part) + p.paddedFloats(), 0.f);
        std::fill(paddedOf(part) + p.partFloats(), sumsOf(part) + sums, 0.f);
      },
      [&](int part, int64_t first, int64_t count) {
        float* padded = paddedOf(part);
        float* v = padded + p.paddedFloats();
        const int64_t blocks = count * p.blocksPerSample();
        const int64_t vStride = p.stride(s.inPlanes, count), wStride = p.stride(s.outPlanes, count);
        float* w = v + 16 * vStride;
        float* m = sumsOf(part);
        transformInput(p, input + first * inSample, count, padded, v);
        transformGradOutput(p, gradOutput + first * outSample, count, padded + p.partFloats(), w);
        // m[xi][out, in] += w[xi][out, blocks] * v[xi][in, blocks]^T
        for (int64_t xi = 0; xi < 16; ++xi)
          blas::gemm(false, true, s.outPlanes, s.inPlanes, blocks, 1.f, w + xi * wStride, blocks, v + xi * vStride,
                     blocks, 1.f, m + xi * s.outPlanes * s.inPlanes, s.inPlanes);
      });
  float* m = sumsOf(0);
  for (int part = 1; part < parts; ++part)
    for (int64_t i = 0; i < sums; ++i) m[i] += sumsOf(part)[i];
  const int64_t kernels = s.outPlanes * s.inPlanes;
  for (int64_t k = 0; k < kernels; ++k) {
    float products[16], gradient[9];
    for (int64_t xi = 0; xi < 16; ++xi) products[xi] = m[xi * kernels + k];
    math::winogradKernelGradient(products, gradient);
    for (int64_t i = 0; i < 9; ++i) gradWeight[k * 9 + i] += scale * gradient[i];
  }
}

}  // namespace nn::cpu
