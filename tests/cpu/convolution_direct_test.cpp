// nn::SpatialConvolution's 3x3 layers of stride 1 or 2 and padding 1 onto rows of 7, 8 or 14
// positions, with output planes a multiple of 32, which the CPU computes directly at the kernels'
// level avx2 and above (nn/cpu/DirectConvolution.cpp, one source compiled per level): forward,
// gradInput and the parameters' gradients against the sums of their terms in double, tiles of two
// rows and of one, 32 and 64 planes, stride 2 from 16 and 32 planes (its gradInput by the parity
// classes of the input positions), 1x1 layers of stride 2, the weight gradient of wider planes
// (avx512 only); finite differences; the same floats on 1 and 2 compute threads, and in the AVX2
// and AVX-512 forms. Each CPU case requires that the direct route ran the passes it checks, and is
// skipped where the level (the CPU's, or NN_CPU_ISA's) cannot run it. On CUDA devices the same
// bodies check cuDNN.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "nn/cpu/DirectConvolution.h"
#include "nn/cpu/Isa.h"
#include "nn/cpu/Routes.h"
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
    {32, 32, 1, 14, 14},  // a residual network's 14x14 layer: one row a tile
    {64, 32, 1, 7, 7},    // its 7x7 layers: tiles of two rows and a last of one
    {32, 64, 1, 8, 8},    // CIFAR's 8x8 planes
    {32, 32, 1, 4, 7},    // tiles of two rows only
    // Stride 2: a residual network's 28x28 -> 14x14 (16 input planes: gradInput 16 planes at a
    // time) and 14x14 -> 7x7 layers, CIFAR's 16x16 -> 8x8; an odd height (gradInput unfolded).
    {16, 32, 1, 6, 28, 2},
    {32, 64, 1, 14, 14, 2},
    {32, 32, 1, 6, 16, 2},
    {16, 32, 1, 5, 28, 2},
    // 1x1 of stride 2 (a residual network's shortcuts): 28x28 -> 14x14 from 16 planes, 14x14 ->
    // 7x7 from 32, an odd height.
    {16, 32, 0, 6, 28, 2, 1},
    {32, 64, 0, 14, 14, 2, 1},
    {32, 32, 0, 5, 16, 2, 1},
};

// Wider planes, whose weight gradient alone is direct: forward and gradInput unfolded (9x20) or
// Winograd's (16x16).
const std::vector<nn::test::SquareConv> kWide = {
    {32, 32, 1, 9, 20},
    {16, 32, 1, 16, 16},
};

// Cases 7 and 10: an odd input height, whose gradInput is unfolded.
bool directGradInput(size_t i) { return i != 7 && i != 10; }

}  // namespace

TEST_CASE("SpatialConvolution 3x3 onto 7, 8 and 14 positions a row takes the direct route at avx2 and above",
          "[SpatialConvolution]") {
  const bool avx2 = nn::cpu::isaAtLeast(Isa::avx2), avx512 = nn::cpu::isaAtLeast(Isa::avx512);
  for (const nn::test::SquareConv& c : kCases) {
    CAPTURE(c.planes, c.outPlanes, c.height, c.width);
    CHECK(nn::cpu::directFits(nn::test::shapeOf(c, 2)) == avx2);
  }
  nn::test::SquareConv other = kCases[0];
  other.outPlanes = 48;  // not a multiple of 32
  CHECK_FALSE(nn::cpu::directFits(nn::test::shapeOf(other, 2)));
  other = kCases[0];
  other.width = 12;
  CHECK_FALSE(nn::cpu::directFits(nn::test::shapeOf(other, 2)));
  for (const nn::test::SquareConv& c : kWide) {
    CAPTURE(c.planes, c.height, c.width);
    CHECK_FALSE(nn::cpu::directFits(nn::test::shapeOf(c, 2)));
    CHECK(nn::cpu::directWeightGradientFits(nn::test::shapeOf(c, 2)) == avx512);
  }
  other = kWide[0];
  other.planes = 3;  // a first layer: unfolded
  CHECK_FALSE(nn::cpu::directWeightGradientFits(nn::test::shapeOf(other, 2)));
  other = kCases[9];
  other.stride = 1;  // a 1x1 layer of stride 1 is one GEMM unfolded
  CHECK_FALSE(nn::cpu::directFits(nn::test::shapeOf(other, 2)));
  // gradInput: of stride 1 from input planes a multiple of 32, of stride 2 from a multiple of 16
  // and input planes of twice the output's height.
  for (size_t i = 0; i < kCases.size(); ++i) {
    CAPTURE(i);
    CHECK(nn::cpu::directGradInputFits(nn::test::shapeOf(kCases[i], 2)) == (directGradInput(i) && avx2));
  }
  other = kCases[0];
  other.planes = 16;
  CHECK_FALSE(nn::cpu::directGradInputFits(nn::test::shapeOf(other, 2)));
  other = kCases[4];
  other.planes = 24;
  CHECK_FALSE(nn::cpu::directGradInputFits(nn::test::shapeOf(other, 2)));
}

NN_DEVICE_TEST_CASE("SpatialConvolution 3x3 on narrow planes of 32 and 64 matches the sums of its taps",
                    "[SpatialConvolution]") {
  if (kind.isCpu()) NN_REQUIRE_ISA(Isa::avx2);
  for (size_t i = 0; i < kCases.size(); ++i)
    nn::test::checkConvolutionRoute(kind, kCases[i], 3, Route::convolutionDirect, {true, directGradInput(i), true});
  // Wider planes: the weight gradient alone, and only at avx512.
  const bool avx512 = nn::cpu::isaAtLeast(Isa::avx512);
  for (const nn::test::SquareConv& c : kWide)
    nn::test::checkConvolutionRoute(kind, c, 3, Route::convolutionDirect, {false, false, avx512});
}

NN_DEVICE_TEST_CASE("SpatialConvolution 3x3 on narrow planes of 32 agrees with finite differences",
                    "[SpatialConvolution]") {
  if (kind.isCpu()) NN_REQUIRE_ISA(Isa::avx2);
  nn::manualSeed(8);
  nn::SpatialConvolution conv(32, 32, 3, 3, 1, 1, 1, 1);
  conv.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({1, 32, 3, 7}, 36));
  const nn::test::RouteWatch route(Route::convolutionDirect);
  REQUIRE_THAT(nn::test::checkInputGradient(conv, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(conv, x), nn::test::EachAgreesWithin(1e-3, 2));
  if (kind.isCpu()) {
    CHECK(route.ran(Pass::forward) > 0);
    CHECK(route.ran(Pass::gradInput) > 0);
    CHECK(route.ran(Pass::gradParameters) > 0);
  }
}

TEST_CASE("SpatialConvolution 3x3 on narrow planes gives the same floats on 1 and 2 compute threads",
          "[SpatialConvolution]") {
  // The promise rests on the direct route, whose parts are whole samples.
  NN_REQUIRE_ISA(Isa::avx2);
  // 5 samples: 3 on the first thread, 2 on the second; each sample's output its own. Stride 1 on
  // 7x7, stride 2 onto 14x14 (gradInput by the parity classes), 1x1 of stride 2 onto 7x7.
  for (const nn::test::SquareConv& c : {kCases[1], kCases[5], kCases[9]}) {
    CAPTURE(c.planes, c.outPlanes, c.height, c.width, c.stride, c.size);
    nn::manualSeed(9);
    nn::SpatialConvolution conv(c.planes, c.outPlanes, c.size, c.size, c.stride, c.stride, c.pad, c.pad);
    const Tensor x = nn::test::randomTensor({5, c.planes, c.height, c.width}, 37);
    const Tensor g = nn::test::randomTensor({5, c.outPlanes, c.outHeight(), c.outWidth()}, 38);
    const nn::test::RouteWatch route(Route::convolutionDirect);
    nn::test::checkOneAndTwoThreads(conv, x, g);
    CHECK(route.ran(Pass::forward) == 2);
    CHECK(route.ran(Pass::gradInput) == 2);
    CHECK(route.ran(Pass::gradParameters) == 2);
  }
}

TEST_CASE("SpatialConvolution 3x3 on narrow planes gives the same floats in the AVX2 and AVX-512 forms",
          "[SpatialConvolution]") {
  // Each sum runs in the same order in both forms (nn/cpu/DirectConvolution.cpp over Vec512 and Vec256), so a model
  // trained on one CPU computes as on the other; on 2 threads, each part's weight gradient too.
  NN_REQUIRE_ISA(Isa::avx512);
  for (int threads : {1, 2}) {
    nn::setNumThreads(threads);
    for (size_t i = 0; i < kCases.size(); ++i) {
      const nn::test::SquareConv& c = kCases[i];
      CAPTURE(threads, i);
      nn::manualSeed(12);
      nn::SpatialConvolution conv(c.planes, c.outPlanes, c.size, c.size, c.stride, c.stride, c.pad, c.pad);
      const Tensor x = nn::test::randomTensor({5, c.planes, c.height, c.width}, 42);
      const Tensor g = nn::test::randomTensor({5, c.outPlanes, c.outHeight(), c.outWidth()}, 43);
      const nn::test::RouteWatch route(Route::convolutionDirect);
      nn::test::checkFormsAgree(conv, x, g);
      CHECK(route.ran(Pass::forward) == 2);
      CHECK(route.ran(Pass::gradInput) == (directGradInput(i) ? 2 : 0));
      CHECK(route.ran(Pass::gradParameters) == 2);
    }
  }
  nn::setNumThreads(1);
}
