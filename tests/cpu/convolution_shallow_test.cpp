// nn::SpatialConvolution's first layers (1 to 4 input planes, 3x3 or 5x5 kernels of stride 1),
// whose forward the CPU computes along the output rows at the kernels' level avx2 and above
// (nn/cpu/ShallowConvolution.cpp, one source compiled per level): which layers take that route, a
// hand-computed output, the three passes against the sums of their terms in double (rows of one
// to four vectors, the last partly filled; tiles of several rows and the single rows after them;
// padding 0, 1 and 2), finite differences, the same floats on 1 and 2 compute threads and in the
// AVX2 and AVX-512 forms. Each CPU case requires that the shallow route ran the forward passes it
// checks, and is skipped where the level (the CPU's, or NN_CPU_ISA's) cannot run it. On CUDA
// devices the same bodies check cuDNN.
#include <catch2/catch.hpp>
#include <vector>

#include "nn/cpu/Isa.h"
#include "nn/cpu/Routes.h"
#include "nn/cpu/ShallowConvolution.h"
#include "nn/modules/SpatialConvolution.h"
#include "nn/runtime/ComputeThreads.h"
#include "nn/tensor/Random.h"
#include "tests/reference/ConvolutionSums.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/support/Routes.h"

using nn::Tensor;
using nn::cpu::Isa;
using nn::cpu::Pass;
using nn::cpu::Route;

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

TEST_CASE("SpatialConvolution of 1 to 4 input planes takes the shallow route at avx2 and above",
          "[SpatialConvolution]") {
  const bool avx2 = nn::cpu::isaAtLeast(Isa::avx2);
  for (size_t i = 0; i + 1 < kCases.size(); ++i) {
    CAPTURE(i);
    CHECK(nn::cpu::shallowFits(nn::test::shapeOf(kCases[i], 2)) == avx2);
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
  if (kind.isCpu()) NN_REQUIRE_ISA(Isa::avx2);
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
  const nn::test::RouteWatch route(Route::convolutionShallow);
  const Tensor y = conv.forward(kind.on(Tensor::fromVector({1, 1, 2, 2}, {1, 2, 3, 4})));
  if (kind.isCpu()) CHECK(route.ran(Pass::forward) == 1);
  const std::vector<float> expected = {10.5f, 10.5f, 10.5f, 10.5f,  // all ones, plus 0.5
                                       1,     2,     3,     4,      // the centre tap
                                       -1,    -1,    -1,    0,      // (0, 0): only (1, 1) sees the 1
                                       7,     7,     7,     7};
  CHECK(y.sizes() == std::vector<int64_t>{1, 4, 2, 2});
  CHECK(y.toVector() == expected);
}

NN_DEVICE_TEST_CASE("SpatialConvolution of 1 to 4 input planes matches the sums of its taps", "[SpatialConvolution]") {
  if (kind.isCpu()) NN_REQUIRE_ISA(Isa::avx2);
  // The forward alone is shallow; the last case's (33 positions a row) unfolded.
  for (size_t i = 0; i < kCases.size(); ++i)
    nn::test::checkConvolutionRoute(kind, kCases[i], 3, Route::convolutionShallow,
                                    {i + 1 < kCases.size(), false, false});
}

NN_DEVICE_TEST_CASE("SpatialConvolution of 3 input planes agrees with finite differences", "[SpatialConvolution]") {
  if (kind.isCpu()) NN_REQUIRE_ISA(Isa::avx2);
  nn::manualSeed(10);
  nn::SpatialConvolution conv(3, 4, 3, 3, 1, 1, 1, 1);
  conv.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({2, 3, 5, 18}, 39));
  const nn::test::RouteWatch route(Route::convolutionShallow);
  REQUIRE_THAT(nn::test::checkInputGradient(conv, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(conv, x), nn::test::EachAgreesWithin(1e-3, 2));
  if (kind.isCpu()) CHECK(route.ran(Pass::forward) > 0);
}

TEST_CASE("SpatialConvolution of one input plane gives the same floats on 1 and 2 compute threads",
          "[SpatialConvolution]") {
  NN_REQUIRE_ISA(Isa::avx2);
  // 5 samples: 3 on the first thread, 2 on the second.
  nn::manualSeed(11);
  nn::SpatialConvolution conv(1, 16, 3, 3, 1, 1, 1, 1);
  const Tensor x = nn::test::randomTensor({5, 1, 28, 28}, 40);
  const Tensor g = nn::test::randomTensor({5, 16, 28, 28}, 41);
  const nn::test::RouteWatch route(Route::convolutionShallow);
  nn::test::checkOneAndTwoThreads(conv, x, g);
  CHECK(route.ran(Pass::forward) == 2);
}

TEST_CASE("SpatialConvolution of 1 to 4 input planes gives the same floats in the AVX2 and AVX-512 forms",
          "[SpatialConvolution]") {
  // Each output value runs in the same order in both forms (nn/cpu/ShallowConvolution.cpp over Vec512 and Vec256).
  NN_REQUIRE_ISA(Isa::avx512);
  for (size_t i = 0; i + 1 < kCases.size(); ++i) {
    const nn::test::SquareConv& c = kCases[i];
    CAPTURE(i);
    nn::manualSeed(13);
    nn::SpatialConvolution conv(c.planes, c.outPlanes, c.size, c.size, c.stride, c.stride, c.pad, c.pad);
    const Tensor x = nn::test::randomTensor({3, c.planes, c.height, c.width}, 44);
    const Tensor g = nn::test::randomTensor({3, c.outPlanes, c.outHeight(), c.outWidth()}, 45);
    const nn::test::RouteWatch route(Route::convolutionShallow);
    nn::test::checkFormsAgree(conv, x, g);
    CHECK(route.ran(Pass::forward) == 2);
  }
}
