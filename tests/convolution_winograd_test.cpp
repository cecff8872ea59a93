// nn::SpatialConvolution's 3x3 layers of stride 1 with 16 planes or more on each side and
// output planes of 256 positions or more, which the CPU computes with Winograd's F(2x2, 3x3)
// (nn/math/Winograd.h, nn/cpu/WinogradConvolution.cpp): forward, gradInput and the parameters'
// gradients against the sums of their terms, computed here in double; odd sizes, whose last blocks reach past the
// plane, and rows of blocks that are not a multiple of eight; padding 0, 1 and 2; finite differences; the same floats
// on 1 and 2 compute threads. On CUDA devices the same bodies check cuDNN.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "nn/Parallel.h"
#include "nn/Random.h"
#include "nn/SpatialConvolution.h"
#include "tests/DeviceTest.h"
#include "tests/GradCheck.h"

using nn::Tensor;

namespace {

struct Case {
  int64_t planes, outPlanes, pad, height, width;
};

// The layers of the test: the output of each is height + 2 pad - 2 by width + 2 pad - 2.
const std::vector<Case> kCases = {
    {16, 17, 1, 16, 16},  // 8 blocks a row: one group of eight
    {16, 16, 0, 18, 18},  // no padding
    {17, 16, 2, 15, 15},  // 17 x 17 out: the last block of each row and column half outside
    {16, 24, 1, 17, 23},  // 9 and 12 blocks a row: groups of eight and a rest
};

// Worst |value - reference| / (1 + sum of |terms|) over the elements: the reference's terms'
// magnitudes bound the rounding of any order and form of their sum.
struct Reference {
  std::vector<double> value, magnitude;
};

double worstError(const Tensor& t, const Reference& r) {
  const std::vector<float> v = t.toVector();
  REQUIRE(v.size() == r.value.size());
  double worst = 0;
  for (size_t i = 0; i < v.size(); ++i) worst = std::max(worst, std::fabs(v[i] - r.value[i]) / (1 + r.magnitude[i]));
  return worst;
}

// y[n][o][y][x] = b[o] + sum over c, ky, kx of w[o][c][ky][kx] x[n][c][y - pad + ky][x - pad + kx].
Reference forwardReference(const Case& c, int64_t batch, const std::vector<float>& x, const std::vector<float>& w,
                           const std::vector<float>& b) {
  const int64_t outH = c.height + 2 * c.pad - 2, outW = c.width + 2 * c.pad - 2;
  Reference r{std::vector<double>(static_cast<size_t>(batch * c.outPlanes * outH * outW)), {}};
  r.magnitude = r.value;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < c.outPlanes; ++o)
      for (int64_t oy = 0; oy < outH; ++oy)
        for (int64_t ox = 0; ox < outW; ++ox) {
          double sum = b[static_cast<size_t>(o)], magnitude = std::fabs(sum);
          for (int64_t p = 0; p < c.planes; ++p)
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 3; ++kx) {
                const int64_t iy = oy - c.pad + ky, ix = ox - c.pad + kx;
                if (iy < 0 || iy >= c.height || ix < 0 || ix >= c.width) continue;
                const double term = double(w[static_cast<size_t>(((o * c.planes + p) * 3 + ky) * 3 + kx)]) *
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

// gradInput[n][c][iy][ix] = sum over o, ky, kx of w[o][c][ky][kx] g[n][o][iy + pad - ky][ix + pad - kx].
Reference gradInputReference(const Case& c, int64_t batch, const std::vector<float>& g, const std::vector<float>& w) {
  const int64_t outH = c.height + 2 * c.pad - 2, outW = c.width + 2 * c.pad - 2;
  Reference r{std::vector<double>(static_cast<size_t>(batch * c.planes * c.height * c.width)), {}};
  r.magnitude = r.value;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t p = 0; p < c.planes; ++p)
      for (int64_t iy = 0; iy < c.height; ++iy)
        for (int64_t ix = 0; ix < c.width; ++ix) {
          double sum = 0, magnitude = 0;
          for (int64_t o = 0; o < c.outPlanes; ++o)
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 3; ++kx) {
                const int64_t oy = iy + c.pad - ky, ox = ix + c.pad - kx;
                if (oy < 0 || oy >= outH || ox < 0 || ox >= outW) continue;
                const double term = double(w[static_cast<size_t>(((o * c.planes + p) * 3 + ky) * 3 + kx)]) *
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

// gradWeight[o][c][ky][kx] = scale * sum over n, oy, ox of g[n][o][oy][ox] x[n][c][oy - pad + ky][ox - pad + kx],
// then gradBias[o] = scale * the sum of g[n][o]: one Reference of the weights' values, then the biases'.
Reference gradParametersReference(const Case& c, int64_t batch, const std::vector<float>& x,
                                  const std::vector<float>& g, double scale) {
  const int64_t outH = c.height + 2 * c.pad - 2, outW = c.width + 2 * c.pad - 2;
  Reference r{std::vector<double>(static_cast<size_t>(c.outPlanes * c.planes * 9 + c.outPlanes)), {}};
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
          add(static_cast<size_t>(c.outPlanes * c.planes * 9 + o), gradient);
          for (int64_t p = 0; p < c.planes; ++p)
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 3; ++kx) {
                const int64_t iy = oy - c.pad + ky, ix = ox - c.pad + kx;
                if (iy < 0 || iy >= c.height || ix < 0 || ix >= c.width) continue;
                add(static_cast<size_t>(((o * c.planes + p) * 3 + ky) * 3 + kx),
                    gradient * x[static_cast<size_t>(((n * c.planes + p) * c.height + iy) * c.width + ix)]);
              }
        }
  return r;
}

}  // namespace

NN_DEVICE_TEST_CASE("SpatialConvolution 3x3 of stride 1 over 16 planes and more matches the sums of its taps",
                    "[SpatialConvolution]") {
  const int64_t batch = 3;
  for (const Case& c : kCases) {
    CAPTURE(c.planes, c.outPlanes, c.pad, c.height, c.width);
    nn::manualSeed(5);
    nn::SpatialConvolution conv(c.planes, c.outPlanes, 3, 3, 1, 1, c.pad, c.pad);
    conv.to(kind.device());
    const int64_t outH = c.height + 2 * c.pad - 2, outW = c.width + 2 * c.pad - 2;
    const Tensor x = nn::test::randomTensor({batch, c.planes, c.height, c.width}, 31);
    const Tensor g = nn::test::randomTensor({batch, c.outPlanes, outH, outW}, 32);
    const std::vector<float> w = conv.weight.toVector(), b = conv.bias.toVector();
    conv.zeroGradParameters();
    const Tensor y = conv.forward(kind.on(x));
    const Tensor gi = conv.backward(kind.on(x), kind.on(g), 0.5f);
    // Winograd's transforms add up to 4 inputs and 9 kernel taps before the products, and 16
    // products after: rounding far below 1e-5 of the terms' magnitude (a wrong tap or block
    // is off by a whole term).
    CHECK(worstError(y, forwardReference(c, batch, x.toVector(), w, b)) < 1e-5);
    CHECK(worstError(gi, gradInputReference(c, batch, g.toVector(), w)) < 1e-5);
    std::vector<float> gradients = conv.gradWeight.toVector();
    for (float b : conv.gradBias.toVector()) gradients.push_back(b);
    CHECK(worstError(Tensor::fromVector({static_cast<int64_t>(gradients.size())}, gradients),
                     gradParametersReference(c, batch, x.toVector(), g.toVector(), 0.5)) < 1e-5);
  }
}

NN_DEVICE_TEST_CASE("SpatialConvolution 3x3 of stride 1 over 16 planes agrees with finite differences",
                    "[SpatialConvolution]") {
  nn::manualSeed(6);
  nn::SpatialConvolution conv(16, 16, 3, 3, 1, 1, 1, 1);
  conv.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({1, 16, 16, 17}, 33));
  REQUIRE_THAT(nn::test::checkInputGradient(conv, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(conv, x), nn::test::EachAgreesWithin(1e-3, 2));
}

TEST_CASE("SpatialConvolution 3x3 of stride 1 gives the same floats on 1 and 2 compute threads",
          "[SpatialConvolution]") {
  // 9 samples: chunks of the batch cut between the threads, the results of each sample its own.
  nn::manualSeed(7);
  nn::SpatialConvolution conv(32, 32, 3, 3, 1, 1, 1, 1);
  const Tensor x = nn::test::randomTensor({9, 32, 32, 32}, 34);
  const Tensor g = nn::test::randomTensor({9, 32, 32, 32}, 35);
  const Tensor y = conv.forward(x).clone();
  const Tensor gi = conv.backward(x, g).clone();
  nn::setNumThreads(2);
  const Tensor y2 = conv.forward(x).clone();
  const Tensor gi2 = conv.backward(x, g).clone();
  nn::setNumThreads(1);
  CHECK(nn::test::maxAbsDiff(y2, y) == 0);
  CHECK(nn::test::maxAbsDiff(gi2, gi) == 0);
  // The weight gradient is summed per thread and the threads' sums added: only rounding apart.
  conv.zeroGradParameters();
  conv.backward(x, g);
  const Tensor gw = conv.gradWeight.clone();
  nn::setNumThreads(2);
  conv.zeroGradParameters();
  conv.backward(x, g);
  nn::setNumThreads(1);
  double largest = 0;
  for (float v : gw.toVector()) largest = std::max(largest, std::fabs(double(v)));
  CHECK(largest > 1);
  CHECK(nn::test::maxAbsDiff(conv.gradWeight, gw) < 1e-5 * largest);
}
