// The CPU table of PoolingKernels. Max pooling makes one pass over each window, remembering the
// winner, and cuts the planes into parts, one per compute thread of the device (nn/runtime/ComputeThreads.h);
// windows that tile the input without overlap take a faster path. Average pooling sums each
// window, and spreads its gradient back evenly, on the calling thread.
#include <algorithm>
#include <atomic>

#include "nn/cpu/Tables.h"
#include "nn/math/Pooling.h"
#include "nn/runtime/ComputeThreads.h"

namespace nn::cpu {

namespace {

// math::maxPoolWindow of a 2x2 window, written out so that a block of windows vectorises.
inline void windowMax2x2(const float* cell, int64_t width, int32_t at, float& value, float& index) {
  const int32_t w = static_cast<int32_t>(width);
  float best = cell[0];
  int32_t bestAt = at;
  math::maxPoolScan(cell[1], at + 1, best, bestAt);
  math::maxPoolScan(cell[width], at + w, best, bestAt);
  math::maxPoolScan(cell[width + 1], at + w + 1, best, bestAt);
  value = best;
  index = static_cast<float>(bestAt);
}

// Blocks of Windows 2x2 windows side by side, the first with top-left cell `cell` at plane index
// `at`: 8 fill a vector of floats, 4 half of one. The block functions stay out of line: GCC
// vectorises their loops only in a function of their own, where the restrict qualifiers hold.
template <int32_t Windows>
[[gnu::noinline]] void blockMax2x2(const float* __restrict cell, int64_t width, int32_t at, float* __restrict value,
                                   float* __restrict index) {
  for (int32_t j = 0; j < Windows; ++j) windowMax2x2(cell + 2 * j, width, at + 2 * j, value[j], index[j]);
}

// Gradients of Windows 2x2 windows side by side to their cells, 2 * Windows in the row `top`
// and as many in the row `bottom` below it, the first at plane index `at`; returns how many of the
// cells won their window.
template <int32_t Windows>
[[gnu::noinline]] int32_t blockGradient2x2(const float* __restrict winner, const float* __restrict gradOutput,
                                           int32_t at, int32_t width, float* __restrict top, float* __restrict bottom) {
  int32_t won = 0;
  for (int32_t j = 0; j < Windows; ++j) {
    const float cells[4] = {static_cast<float>(at + 2 * j), static_cast<float>(at + 2 * j + 1),
                            static_cast<float>(at + width + 2 * j), static_cast<float>(at + width + 2 * j + 1)};
    top[2 * j] = math::maxPoolCellGradient(cells[0], winner[j], gradOutput[j]);
    top[2 * j + 1] = math::maxPoolCellGradient(cells[1], winner[j], gradOutput[j]);
    bottom[2 * j] = math::maxPoolCellGradient(cells[2], winner[j], gradOutput[j]);
    bottom[2 * j + 1] = math::maxPoolCellGradient(cells[3], winner[j], gradOutput[j]);
    won += (cells[0] == winner[j]) + (cells[1] == winner[j]) + (cells[2] == winner[j]) + (cells[3] == winner[j]);
  }
  return won;
}

// Calls f(p, o, window) for each window of each plane p of `planes`, in row-major order: o is the
// window's place in its plane's output.
template <typename F>
void forEachWindow(const PoolingShape& s, Range planes, F f) {
  for (int64_t p = planes.begin; p < planes.end; ++p)
    for (int64_t oy = 0; oy < s.outHeight; ++oy)
      for (int64_t ox = 0; ox < s.outWidth; ++ox) f(p, oy * s.outWidth + ox, poolWindowOf(s, oy, ox));
}

// The faster forward over a range of planes (one part of the compute threads' work).
void maxOutputDisjoint(const PoolingShape& s, const float* input, float* values, float* winners, Range planes) {
  const int64_t inPlane = s.height * s.width, outPlane = s.outHeight * s.outWidth;
  const bool twoByTwo = s.kW == 2 && s.kH == 2;  // the common case, with constant sizes
  for (int64_t p = planes.begin; p < planes.end; ++p)
    for (int64_t oy = 0; oy < s.outHeight; ++oy) {
      const float* row = input + p * inPlane + oy * s.kH * s.width;
      const int32_t rowAt = static_cast<int32_t>(oy * s.kH * s.width);
      float* out = values + p * outPlane + oy * s.outWidth;
      float* arg = winners + p * outPlane + oy * s.outWidth;
      int64_t ox = 0;
      if (twoByTwo) {
        for (; ox + 8 <= s.outWidth; ox += 8)
          blockMax2x2<8>(row + 2 * ox, s.width, rowAt + static_cast<int32_t>(2 * ox), out + ox, arg + ox);
        for (; ox + 4 <= s.outWidth; ox += 4)
          blockMax2x2<4>(row + 2 * ox, s.width, rowAt + static_cast<int32_t>(2 * ox), out + ox, arg + ox);
      }
      for (; ox < s.outWidth; ++ox)
        math::maxPoolWindow(row + ox * s.kW, s.width, s.kH, s.kW, rowAt + static_cast<int32_t>(ox * s.kW), out[ox],
                            arg[ox]);
    }
}

// The faster backward over a range of planes. Each input cell lies in at most one window, so
// every gradInput cell is written once: the window's gradient where the cell won it, 0 where it
// lost or lies outside every window. Returns false unless every window finds its winner among
// its cells (else the indices are not of a forward on this input).
bool maxGradInputDisjoint(const PoolingShape& s, const float* gradOut, const float* args, float* gradIn, Range planes) {
  const int64_t inPlane = s.height * s.width, outPlane = s.outHeight * s.outWidth;
  const int64_t kW = s.kW, kH = s.kH, width = s.width;
  const bool twoByTwo = kW == 2 && kH == 2;  // the common case, with constant sizes
  int64_t winners = 0;
  for (int64_t p = planes.begin; p < planes.end; ++p) {
    const float* go = gradOut + p * outPlane;
    const float* arg = args + p * outPlane;
    float* gi = gradIn + p * inPlane;
    for (int64_t oy = 0; oy < s.outHeight; ++oy) {
      const float* winner = arg + oy * s.outWidth;
      const float* grads = go + oy * s.outWidth;
      float* top = gi + oy * kH * width;
      const int32_t topAt = static_cast<int32_t>(oy * kH * width);
      int64_t ox = 0;
      if (twoByTwo) {
        for (; ox + 8 <= s.outWidth; ox += 8)
          winners += blockGradient2x2<8>(winner + ox, grads + ox, topAt + static_cast<int32_t>(2 * ox),
                                         static_cast<int32_t>(width), top + 2 * ox, top + width + 2 * ox);
        for (; ox + 4 <= s.outWidth; ox += 4)
          winners += blockGradient2x2<4>(winner + ox, grads + ox, topAt + static_cast<int32_t>(2 * ox),
                                         static_cast<int32_t>(width), top + 2 * ox, top + width + 2 * ox);
      }
      for (int64_t ky = 0; ky < kH; ++ky) {
        float* line = top + ky * width;
        const int32_t lineAt = topAt + static_cast<int32_t>(ky * width);
        int64_t x = ox * kW;
        for (int64_t o = ox; o < s.outWidth; ++o)
          for (int64_t kx = 0; kx < kW; ++kx, ++x) {
            const float at = static_cast<float>(lineAt + static_cast<int32_t>(x));
            line[x] = math::maxPoolCellGradient(at, winner[o], grads[o]);
            winners += at == winner[o];
          }
        for (; x < width; ++x) line[x] = 0.f;  // right of the last window
      }
    }
    for (int64_t i = s.outHeight * kH * width; i < inPlane; ++i) gi[i] = 0.f;  // below the last window
  }
  return winners == (planes.end - planes.begin) * outPlane;
}

void cpuMaxUpdateOutput(const Device& device, const PoolingShape& s, const float* input, float* output,
                        float* indices) {
  const int parts = parallelParts(device, s.planes);
  if (disjointWindows(s)) {
    parallelFor(device, parts,
                [&](int part) { maxOutputDisjoint(s, input, output, indices, partRange(s.planes, parts, part)); });
    return;
  }
  const int64_t inPlane = s.height * s.width, outPlane = s.outHeight * s.outWidth;
  parallelFor(device, parts, [&](int part) {
    forEachWindow(s, partRange(s.planes, parts, part), [&](int64_t p, int64_t o, const math::PoolWindow& w) {
      // every window holds an input cell (math::poolOutputSize)
      math::maxPoolWindow(input + p * inPlane + w.y0 * s.width + w.x0, s.width, w.y1 - w.y0, w.x1 - w.x0,
                          static_cast<int32_t>(w.y0 * s.width + w.x0), output[p * outPlane + o],
                          indices[p * outPlane + o]);
    });
  });
}

bool cpuMaxUpdateGradInput(const Device& device, const PoolingShape& s, const float* gradOutput, const float* indices,
                           float* gradInput) {
  const int64_t inPlane = s.height * s.width, outPlane = s.outHeight * s.outWidth;
  const int parts = parallelParts(device, s.planes);
  std::atomic<bool> found{true};
  if (disjointWindows(s)) {
    parallelFor(device, parts, [&](int part) {
      if (!maxGradInputDisjoint(s, gradOutput, indices, gradInput, partRange(s.planes, parts, part))) found = false;
    });
    return found;
  }
  std::fill_n(gradInput, s.planes * inPlane, 0.f);
  parallelFor(device, parts, [&](int part) {
    const Range planes = partRange(s.planes, parts, part);
    for (int64_t p = planes.begin; p < planes.end; ++p) {
      const float* go = gradOutput + p * outPlane;
      const float* arg = indices + p * outPlane;
      float* gi = gradInput + p * inPlane;
      for (int64_t i = 0; i < outPlane; ++i) {
        const int64_t k = static_cast<int64_t>(arg[i]);
        if (k < 0 || k >= inPlane) {
          found = false;
          return;
        }
        gi[k] += go[i];
      }
    }
  });
  return found;
}

void cpuAverageUpdateOutput(const Device&, const PoolingShape& s, bool countIncludePad, const float* input,
                            float* output) {
  const int64_t inPlane = s.height * s.width, outPlane = s.outHeight * s.outWidth;
  forEachWindow(s, Range{0, s.planes}, [&](int64_t p, int64_t o, const math::PoolWindow& w) {
    output[p * outPlane + o] = math::avgPoolWindow(input + p * inPlane, s.width, w.y0, w.y1, w.x0, w.x1,
                                                   avgPoolDivisorOf(s, w, countIncludePad));
  });
}

void cpuAverageUpdateGradInput(const Device&, const PoolingShape& s, bool countIncludePad, const float* gradOutput,
                               float* gradInput) {
  const int64_t inPlane = s.height * s.width, outPlane = s.outHeight * s.outWidth;
  std::fill_n(gradInput, s.planes * inPlane, 0.f);
  forEachWindow(s, Range{0, s.planes}, [&](int64_t p, int64_t o, const math::PoolWindow& w) {
    const float share = math::avgPoolMean(gradOutput[p * outPlane + o], avgPoolDivisorOf(s, w, countIncludePad));
    float* gi = gradInput + p * inPlane;
    for (int64_t y = w.y0; y < w.y1; ++y)
      for (int64_t x = w.x0; x < w.x1; ++x) gi[y * s.width + x] += share;
  });
}

// Calls cell(plane, y, x) for every cell of a planes x rows x cols block, the planes cut into
// parts, one per compute thread of the device.
template <typename Cell>
void forEachCell(const Device& device, int64_t planes, int64_t rows, int64_t cols, Cell cell) {
  const int parts = parallelParts(device, planes);
  parallelFor(device, parts, [&](int part) {
    const Range range = partRange(planes, parts, part);
    for (int64_t p = range.begin; p < range.end; ++p)
      for (int64_t y = 0; y < rows; ++y)
        for (int64_t x = 0; x < cols; ++x) cell(p, y, x);
  });
}

void cpuAdaptiveAverageOutput(const Device& device, const PoolingShape& s, const float* input, float* output) {
  forEachCell(device, s.planes, s.outHeight, s.outWidth, [&](int64_t p, int64_t oy, int64_t ox) {
    output[(p * s.outHeight + oy) * s.outWidth + ox] =
        math::adaptiveAvgPoolOutput(input + p * s.height * s.width, s.height, s.width, s.outHeight, s.outWidth, oy, ox);
  });
}

void cpuAdaptiveAverageGradInput(const Device& device, const PoolingShape& s, const float* gradOutput,
                                 float* gradInput) {
  if (s.outHeight == 1 && s.outWidth == 1) {
    // Global average pooling (a residual network's head): every cell of a plane takes the same
    // share, the one the general formula sums alone, without its window bounds for each cell.
    parallelRanges(device, s.planes, 1, [&](int64_t first, int64_t last) {
      for (int64_t p = first; p < last; ++p)
        std::fill_n(gradInput + p * s.height * s.width, s.height * s.width,
                    0.f + math::adaptiveAvgPoolMean(gradOutput[p], s.height, s.width));
    });
    return;
  }
  forEachCell(device, s.planes, s.height, s.width, [&](int64_t p, int64_t y, int64_t x) {
    gradInput[(p * s.height + y) * s.width + x] = math::adaptiveAvgPoolGradient(
        gradOutput + p * s.outHeight * s.outWidth, s.height, s.width, s.outHeight, s.outWidth, y, x);
  });
}

void cpuUpSamplingNearestOutput(const Device& device, const PoolingShape& s, const float* input, float* output) {
  const int64_t scale = s.outHeight / s.height;
  forEachCell(device, s.planes, s.outHeight, s.outWidth, [&](int64_t p, int64_t oy, int64_t ox) {
    output[(p * s.outHeight + oy) * s.outWidth + ox] =
        math::upSamplingNearestOutput(input + p * s.height * s.width, s.width, scale, oy, ox);
  });
}

void cpuUpSamplingNearestGradInput(const Device& device, const PoolingShape& s, const float* gradOutput,
                                   float* gradInput) {
  const int64_t scale = s.outHeight / s.height;
  forEachCell(device, s.planes, s.height, s.width, [&](int64_t p, int64_t y, int64_t x) {
    gradInput[(p * s.height + y) * s.width + x] =
        math::upSamplingNearestGradient(gradOutput + p * s.outHeight * s.outWidth, s.outWidth, scale, y, x);
  });
}

}  // namespace

PoolingKernels poolingKernels() {
  PoolingKernels k{};
  k.maxUpdateOutput = &cpuMaxUpdateOutput;
  k.maxUpdateGradInput = &cpuMaxUpdateGradInput;
  k.averageUpdateOutput = &cpuAverageUpdateOutput;
  k.averageUpdateGradInput = &cpuAverageUpdateGradInput;
  k.adaptiveAverage.forward = &cpuAdaptiveAverageOutput;
  k.adaptiveAverage.backward = &cpuAdaptiveAverageGradInput;
  k.upSamplingNearest.forward = &cpuUpSamplingNearestOutput;
  k.upSamplingNearest.backward = &cpuUpSamplingNearestGradInput;
  return k;
}

}  // namespace nn::cpu
