// Sums of the terms of a convolution with square kernels, in double, that the CPU's routes
// (unfolded, Winograd, direct) and cuDNN are checked against: the output, gradInput and the
// parameters' gradients.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "nn/backend/ConvolutionKernels.h"
#include "nn/cpu/Routes.h"
#include "nn/modules/SpatialConvolution.h"
#include "nn/runtime/ComputeThreads.h"
#include "nn/tensor/Random.h"
#include "nn/tensor/Tensor.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/support/Routes.h"

namespace nn::test {

// A layer: `planes` in, `outPlanes` out, padding `pad` on every side, input planes of
// height x width, stride `stride`, kernels of size x size.
struct SquareConv {
  int64_t planes, outPlanes, pad, height, width, stride = 1, size = 3;

  int64_t outHeight() const { return (height + 2 * pad - size) / stride + 1; }
  int64_t outWidth() const { return (width + 2 * pad - size) / stride + 1; }
};

// Layer c as the CPU kernels see it, for a batch of n.
inline ConvolutionShape shapeOf(const SquareConv& c, int64_t n) {
  return {n,        c.planes, c.height, c.width, c.outPlanes,   c.size,      c.size,
          c.stride, c.stride, c.pad,    c.pad,   c.outHeight(), c.outWidth()};
}

// Worst |value - reference| / (1 + sum of |terms|) over the elements: the reference's terms'
// magnitudes bound the rounding of any order and form of their sum.
struct Reference {
  std::vector<double> value, magnitude;
};

inline double worstError(const Tensor& t, const Reference& r) {
  const std::vector<float> v = t.toVector();
  REQUIRE(v.size() == r.value.size());
  double worst = 0;
  for (size_t i = 0; i < v.size(); ++i) worst = std::max(worst, std::fabs(v[i] - r.value[i]) / (1 + r.magnitude[i]));
  return worst;
}

// y[n][o][y][x] = b[o] + sum over c, ky, kx of w[o][c][ky][kx] x[n][c][y s - pad + ky][x s - pad + kx] (stride s).
inline Reference forwardReference(const SquareConv& c, int64_t batch, const std::vector<float>& x,
                                  const std::vector<float>& w, const std::vector<float>& b) {
  const int64_t outH = c.outHeight(), outW = c.outWidth();
  Reference r{std::vector<double>(static_cast<size_t>(batch * c.outPlanes * outH * outW)), {}};
  r.magnitude = r.value;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < c.outPlanes; ++o)
      for (int64_t oy = 0; oy < outH; ++oy)
        for (int64_t ox = 0; ox < outW; ++ox) {
          double sum = b[static_cast<size_t>(o)], magnitude = std::fabs(sum);
          for (int64_t p = 0; p < c.planes; ++p)
            for (int64_t ky = 0; ky < c.size; ++ky)
              for (int64_t kx = 0; kx < c.size; ++kx) {
                const int64_t iy = oy * c.stride - c.pad + ky, ix = ox * c.stride - c.pad + kx;
                if (iy < 0 || iy >= c.height || ix < 0 || ix >= c.width) continue;
                const double term = double(w[static_cast<size_t>(((o * c.planes + p) * c.size + ky) * c.size + kx)]) *
                                    x[static_cast<size_t>(((n * c.planes + p) * c.height + iy) * c.width + ix)];
                sum += term;
                magnitude += std::fabs(term);
              }
          const auto i = static_cast<size_t>(((n * c.outPlanes + o) * outH + oy) * outW + ox);
          r.value[i] = sum;
          r.magnitude[i] = magnitude;
        }
  return r;
}

// gradInput[n][c][iy][ix] = sum over o, ky, kx of w[o][c][ky][kx] g[n][o][(iy + pad - ky) / s][(ix + pad - kx) / s],
// where s divides both.
inline Reference gradInputReference(const SquareConv& c, int64_t batch, const std::vector<float>& g,
                                    const std::vector<float>& w) {
  const int64_t outH = c.outHeight(), outW = c.outWidth();
  Reference r{std::vector<double>(static_cast<size_t>(batch * c.planes * c.height * c.width)), {}};
  r.magnitude = r.value;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t p = 0; p < c.planes; ++p)
      for (int64_t iy = 0; iy < c.height; ++iy)
        for (int64_t ix = 0; ix < c.width; ++ix) {
          double sum = 0, magnitude = 0;
          for (int64_t o = 0; o < c.outPlanes; ++o)
            for (int64_t ky = 0; ky < c.size; ++ky)
              for (int64_t kx = 0; kx < c.size; ++kx) {
                const int64_t sy = iy + c.pad - ky, sx = ix + c.pad - kx, oy = sy / c.stride, ox = sx / c.stride;
                if (sy < 0 || sx < 0 || sy % c.stride || sx % c.stride || oy >= outH || ox >= outW) continue;
                const double term = double(w[static_cast<size_t>(((o * c.planes + p) * c.size + ky) * c.size + kx)]) *
                                    g[static_cast<size_t>(((n * c.outPlanes + o) * outH + oy) * outW + ox)];
                sum += term;
                magnitude += std::fabs(term);
              }
          const auto i = static_cast<size_t>(((n * c.planes + p) * c.height + iy) * c.width + ix);
          r.value[i] = sum;
          r.magnitude[i] = magnitude;
        }
  return r;
}

// gradWeight[o][c][ky][kx] = scale * sum over n, oy, ox of g[n][o][oy][ox] x[n][c][oy s - pad + ky][ox s - pad + kx],
// then gradBias[o] = scale * the sum of g[n][o]: one Reference of the weights' values, then the biases'.
inline Reference gradParametersReference(const SquareConv& c, int64_t batch, const std::vector<float>& x,
                                         const std::vector<float>& g, double scale) {
  const int64_t outH = c.outHeight(), outW = c.outWidth();
  Reference r{std::vector<double>(static_cast<size_t>(c.outPlanes * c.planes * c.size * c.size + c.outPlanes)), {}};
  r.magnitude = r.value;
  auto add = [&](size_t i, double term) {
    r.value[i] += scale * term;
    r.magnitude[i] += std::fabs(scale * term);
  };
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < c.outPlanes; ++o)
      for (int64_t oy = 0; oy < outH; ++oy)
        for (int64_t ox = 0; ox < outW; ++ox) {
          const double gradient = g[static_cast<size_t>(((n * c.outPlanes + o) * outH + oy) * outW + ox)];
          add(static_cast<size_t>(c.outPlanes * c.planes * c.size * c.size + o), gradient);
          for (int64_t p = 0; p < c.planes; ++p)
            for (int64_t ky = 0; ky < c.size; ++ky)
              for (int64_t kx = 0; kx < c.size; ++kx) {
                const int64_t iy = oy * c.stride - c.pad + ky, ix = ox * c.stride - c.pad + kx;
                if (iy < 0 || iy >= c.height || ix < 0 || ix >= c.width) continue;
                add(static_cast<size_t>(((o * c.planes + p) * c.size + ky) * c.size + kx),
                    gradient * x[static_cast<size_t>(((n * c.planes + p) * c.height + iy) * c.width + ix)]);
              }
        }
  return r;
}

// Layer c on kind's device, seeded, against the sums above: its output, its gradInput and its
// parameters' gradients (scale 0.5) for a batch of random inputs and gradOutputs.
inline void checkConvolution(const DeviceKind& kind, const SquareConv& c, int64_t batch) {
  CAPTURE(c.planes, c.outPlanes, c.pad, c.height, c.width, c.stride, c.size);
  manualSeed(5);
  SpatialConvolution conv(c.planes, c.outPlanes, c.size, c.size, c.stride, c.stride, c.pad, c.pad);
  conv.to(kind.device());
  const int64_t outH = c.outHeight(), outW = c.outWidth();
  const Tensor x = randomTensor({batch, c.planes, c.height, c.width}, 31);
  const Tensor g = randomTensor({batch, c.outPlanes, outH, outW}, 32);
  const std::vector<float> w = conv.weight.toVector(), b = conv.bias.toVector();
  conv.zeroGradParameters();
  const Tensor y = conv.forward(kind.on(x));
  const Tensor gi = conv.backward(kind.on(x), kind.on(g), 0.5f);
  // Every route rounds far below 1e-5 of the terms' magnitude (Winograd's transforms add up to 4
  // inputs and 9 kernel taps before the products, and 16 products after); a wrong tap or block is
  // off by a whole term.
  CHECK(worstError(y, forwardReference(c, batch, x.toVector(), w, b)) < 1e-5);
  CHECK(worstError(gi, gradInputReference(c, batch, g.toVector(), w)) < 1e-5);
  std::vector<float> gradients = conv.gradWeight.toVector();
  for (float b : conv.gradBias.toVector()) gradients.push_back(b);
  CHECK(worstError(Tensor::fromVector({static_cast<int64_t>(gradients.size())}, gradients),
                   gradParametersReference(c, batch, x.toVector(), g.toVector(), 0.5)) < 1e-5);
}

// The passes of a layer that a CPU route is to run: forward, gradInput, the parameters' gradients.
struct RoutePasses {
  bool forward, gradInput, gradParameters;
};

// checkConvolution, and on CPU runs that `route` ran the passes `passes` names, once each, and no
// other (checkConvolution runs each pass once): a route whose results equal another's (the
// unfolded route's) is checked only if it ran.
inline void checkConvolutionRoute(const DeviceKind& kind, const SquareConv& c, int64_t batch, cpu::Route route,
                                  RoutePasses passes) {
  const RouteWatch watch(route);
  checkConvolution(kind, c, batch);
  if (!kind.isCpu()) return;
  CAPTURE(c.planes, c.outPlanes, c.pad, c.height, c.width, c.stride, c.size);
  CHECK(watch.ran(cpu::Pass::forward) == int64_t(passes.forward));
  CHECK(watch.ran(cpu::Pass::gradInput) == int64_t(passes.gradInput));
  CHECK(watch.ran(cpu::Pass::gradParameters) == int64_t(passes.gradParameters));
}

// conv's output and gradInput for input x and gradOutput g are the same floats on 1 and 2 compute
// threads (each sample's its own), as is its bias gradient (each plane's on one thread); its
// weight gradient, summed per thread and the threads' sums added, only rounding apart.
inline void checkOneAndTwoThreads(SpatialConvolution& conv, const Tensor& x, const Tensor& g) {
  conv.zeroGradParameters();
  const Tensor y = conv.forward(x).clone();
  const Tensor gi = conv.backward(x, g).clone();
  const Tensor gw = conv.gradWeight.clone();
  const Tensor gb = conv.gradBias.clone();
  setNumThreads(2);
  conv.zeroGradParameters();
  const Tensor y2 = conv.forward(x).clone();
  const Tensor gi2 = conv.backward(x, g).clone();
  setNumThreads(1);
  CHECK(maxAbsDiff(y2, y) == 0);
  CHECK(maxAbsDiff(gi2, gi) == 0);
  // The bias gradient: each plane's sums on one thread, in the same order.
  REQUIRE(gb.numel() == conv.gradBias.numel());
  CHECK(maxAbsDiff(conv.gradBias, gb) == 0);
  CHECK(maxAbsDiff(gb, Tensor::zeros(gb.sizes())) > 0);
  double largest = 0;
  for (float v : gw.toVector()) largest = std::max(largest, std::fabs(double(v)));
  CHECK(largest > 1);
  CHECK(maxAbsDiff(conv.gradWeight, gw) < 1e-5 * largest);
}

// conv's output, gradInput, weight and bias gradients (of backward with scale 0.5) for input x
// and gradOutput g are the same floats at the kernels' levels avx512 and avx2 (nn::cpu::setIsa),
// on the thread count of the run: the two forms of a route sum each value in the same order.
inline void checkFormsAgree(SpatialConvolution& conv, const Tensor& x, const Tensor& g) {
  std::vector<Tensor> results[2];
  for (cpu::Isa level : {cpu::Isa::avx512, cpu::Isa::avx2}) {
    const cpu::Isa previous = cpu::setIsa(level);
    conv.zeroGradParameters();
    const Tensor y = conv.forward(x).clone();
    const Tensor gi = conv.backward(x, g, 0.5f).clone();
    results[level == cpu::Isa::avx2] = {y, gi, conv.gradWeight.clone(), conv.gradBias.clone()};
    cpu::setIsa(previous);
  }
  CHECK(maxAbsDiff(results[1][0], results[0][0]) == 0);
  CHECK(maxAbsDiff(results[1][1], results[0][1]) == 0);
  CHECK(maxAbsDiff(results[1][2], results[0][2]) == 0);
  CHECK(maxAbsDiff(results[1][3], results[0][3]) == 0);
}

}  // namespace nn::test
