// nn::SpatialConvolution's first layers (1 to 4 input planes, 3x3 or 5x5 kernels of stride 1),
// whose forward the CPU computes along the output rows where it has AVX-512
// (nn/cpu/ShallowConvolution.cpp): which layers take that route, a hand-computed output, the
// three passes against the sums of their terms in double (rows of one vector and of two, the
// last partly filled; tiles of 3 or 6 rows and the single rows after them; padding 0, 1 and 2),
// finite differences and the same floats on 1 and 2 compute threads. On CUDA devices the same
// bodies check cuDNN; on a CPU without AVX-512, the unfolded route.
#include <catch2/catch.hpp>
#include <vector>

#include "nn/Parallel.h"
#include "nn/Random.h"
#include "nn/SpatialConvolution.h"
#include "nn/cpu/Avx512.h"
#include "nn/cpu/ShallowConvolution.h"
#include "tests/ConvolutionSums.h"
#include "tests/DeviceTest.h"
#include "tests/GradCheck.h"

using nn::Tensor;

namespace {

const std::vector<nn::test::SquareConv> kCases = {
    {1, 16, 1, 28, 28},        // the residual network's first layer: rows of 16 + 12, 9 tiles of 3 rows and 1 row
    {3, 32, 1, 32, 32},        // VGG's on RGB: two whole vectors a row, 10 tiles and 2 rows
    {1, 20, 0, 28, 28, 1, 5},  // LeNet's 5x5: rows of 16 + 8
    {2, 8, 1, 13, 10},         // rows of one vector (10 positions): tiles of 6 rows and 1
    {4, 12, 2, 8, 17, 1, 5},   // 4 planes, padding 2: a last vector of 1 position
    {1, 4, 2, 5, 31, 1, 3},    // padding 2 of a 3x3 kernel: 33 positions a row, unfolded
};

}  // namespace

TEST_CASE("SpatialConvolution of 1 to 4 input planes takes the shallow route where the CPU has AVX-512",
          "[SpatialConvolution]") {
  const bool avx512 = nn::cpu::hasAvx512();
  for (size_t i = 0; i + 1 < kCases.size(); ++i) {
    CAPTURE(i);
    CHECK(nn::cpu::shallowFits(nn::test::shapeOf(kCases[i], 2)) == avx512);
  }
  CHECK_FALSE(nn::cpu::shallowFits(nn::test::shapeOf(kCases.back(), 2)));  // 33 positions a row
  nn::test::SquareConv other = kCases[0];
  other.planes = 5;
  CHECK_FALSE(nn::cpu::shallowFits(nn::test::shapeOf(other, 2)));
  other = kCases[0];
  other.outPlanes = 18;  // not a multiple of 4
  CHECK_FALSE(nn::cpu::shallowFits(nn::test::shapeOf(other, 2)));
  other = kCases[0];
  other.stride = 2;
  CHECK_FALSE(nn::cpu::shallowFits(nn::test::shapeOf(other, 2)));
  other = kCases[2];
  other.size = 7;
  CHECK_FALSE(nn::cpu::shallowFits(nn::test::shapeOf(other, 2)));
  nn::ConvolutionShape dilated = nn::test::shapeOf(kCases[0], 2);
  dilated.dilH = dilated.dilW = 2;
  CHECK_FALSE(nn::cpu::shallowFits(dilated));
}

NN_DEVICE_TEST_CASE("SpatialConvolution of one input plane gives the hand-computed output", "[SpatialConvolution]") {
  // A 2x2 image [1 2; 3 4] through 3x3 kernels with padding 1: every tap of the all-ones kernel
  // meets the whole image at each position (1 + 2 + 3 + 4 = 10), the centre tap alone copies
  // it, the corner tap (0, 0) takes the value up and to the left (zero outside), and the last
  // plane is its bias alone.
  nn::SpatialConvolution conv(1, 4, 3, 3, 1, 1, 1, 1);
  std::vector<float> w(36, 0.f);
  for (int t = 0; t < 9; ++t) w[static_cast<size_t>(t)] = 1.f;
  w[9 + 4] = 1.f;
  w[18 + 0] = 1.f;
  conv.weight.copy_(Tensor::fromVector({4, 1, 3, 3}, w));
  conv.bias.copy_(Tensor::fromVector({4}, {0.5f, 0.f, -1.f, 7.f}));
  conv.to(kind.device());
  const Tensor y = conv.forward(kind.on(Tensor::fromVector({1, 1, 2, 2}, {1, 2, 3, 4})));
  const std::vector<float> expected = {10.5f, 10.5f, 10.5f, 10.5f,  // all ones, plus 0.5
                                       1,     2,     3,     4,      // the centre tap
                                       -1,    -1,    -1,    0,      // (0, 0): only (1, 1) sees the 1
                                       7,     7,     7,     7};
  CHECK(y.sizes() == std::vector<int64_t>{1, 4, 2, 2});
  CHECK(y.toVector() == expected);
}

NN_DEVICE_TEST_CASE("SpatialConvolution of 1 to 4 input planes matches the sums of its taps", "[SpatialConvolution]") {
  for (const nn::test::SquareConv& c : kCases) nn::test::checkConvolution(kind, c, 3);
}

NN_DEVICE_TEST_CASE("SpatialConvolution of 3 input planes agrees with finite differences", "[SpatialConvolution]") {
  nn::manualSeed(10);
  nn::SpatialConvolution conv(3, 4, 3, 3, 1, 1, 1, 1);
  conv.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({2, 3, 5, 18}, 39));
  REQUIRE_THAT(nn::test::checkInputGradient(conv, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(conv, x), nn::test::EachAgreesWithin(1e-3, 2));
}

TEST_CASE("SpatialConvolution of one input plane gives the same floats on 1 and 2 compute threads",
          "[SpatialConvolution]") {
  // 5 samples: 3 on the first thread, 2 on the second.
  nn::manualSeed(11);
  nn::SpatialConvolution conv(1, 16, 3, 3, 1, 1, 1, 1);
  const Tensor x = nn::test::randomTensor({5, 1, 28, 28}, 40);
  const Tensor g = nn::test::randomTensor({5, 16, 28, 28}, 41);
  nn::test::checkOneAndTwoThreads(conv, x, g);
}
