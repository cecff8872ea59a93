// nn::SpatialConvolution's 3x3 layers of stride 1 with 16 planes or more on each side and
// output planes of 256 positions or more, which the CPU computes with Winograd's F(2x2, 3x3)
// (nn/math/Winograd.h, nn/cpu/WinogradConvolution.cpp): forward, gradInput and the parameters'
// gradients against the sums of their terms, computed here in double; odd sizes, whose last blocks reach past the
// plane, and rows of blocks that are not a multiple of eight; padding 0, 1 and 2; finite differences; the same floats
// on 1 and 2 compute threads. Each CPU case requires that the Winograd route ran the passes it
// checks (the unfolded route gives the same sums to rounding). On CUDA devices the same bodies
// check cuDNN.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "nn/cpu/DirectConvolution.h"
#include "nn/cpu/Routes.h"
#include "nn/modules/SpatialConvolution.h"
#include "nn/runtime/ComputeThreads.h"
#include "nn/tensor/Random.h"
#include "tests/reference/ConvolutionSums.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/support/Routes.h"

using nn::Tensor;

namespace {

// The layers of the test: the output of each is height + 2 pad - 2 by width + 2 pad - 2.
const std::vector<nn::test::SquareConv> kCases = {
    {16, 17, 1, 16, 16},  // 8 blocks a row: one group of eight
    {16, 16, 0, 18, 18},  // no padding
    {17, 16, 2, 15, 15},  // 17 x 17 out: the last block of each row and column half outside
    {16, 24, 1, 17, 23},  // 9 and 12 blocks a row: groups of eight and a rest
};

}  // namespace

NN_DEVICE_TEST_CASE("SpatialConvolution 3x3 of stride 1 over 16 planes and more matches the sums of its taps",
                    "[SpatialConvolution]") {
  const int64_t batch = 3;
  // Output planes not a multiple of 32: the weight gradient too is Winograd's at every level.
  for (const nn::test::SquareConv& c : kCases)
    nn::test::checkConvolutionRoute(kind, c, batch, nn::cpu::Route::convolutionWinograd, {true, true, true});
}

NN_DEVICE_TEST_CASE("SpatialConvolution 3x3 of stride 1 over 16 planes agrees with finite differences",
                    "[SpatialConvolution]") {
  nn::manualSeed(6);
  nn::SpatialConvolution conv(16, 16, 3, 3, 1, 1, 1, 1);
  conv.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({1, 16, 16, 17}, 33));
  const nn::test::RouteWatch route(nn::cpu::Route::convolutionWinograd);
  REQUIRE_THAT(nn::test::checkInputGradient(conv, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(conv, x), nn::test::EachAgreesWithin(1e-3, 2));
  if (kind.isCpu()) {
    CHECK(route.ran(nn::cpu::Pass::forward) > 0);
    CHECK(route.ran(nn::cpu::Pass::gradInput) > 0);
    CHECK(route.ran(nn::cpu::Pass::gradParameters) > 0);
  }
}

TEST_CASE("SpatialConvolution 3x3 of stride 1 gives the same floats on 1 and 2 compute threads",
          "[SpatialConvolution]") {
  // 9 samples: chunks of the batch cut between the threads, the results of each sample its own.
  nn::manualSeed(7);
  nn::SpatialConvolution conv(32, 32, 3, 3, 1, 1, 1, 1);
  const Tensor x = nn::test::randomTensor({9, 32, 32, 32}, 34);
  const Tensor g = nn::test::randomTensor({9, 32, 32, 32}, 35);
  const nn::test::RouteWatch route(nn::cpu::Route::convolutionWinograd);
  nn::test::checkOneAndTwoThreads(conv, x, g);
  CHECK(route.ran(nn::cpu::Pass::forward) == 2);
  CHECK(route.ran(nn::cpu::Pass::gradInput) == 2);
  // 32 output planes: the weight gradient is the direct route's where that serves it (avx512).
  const bool direct = nn::cpu::directWeightGradientFits(nn::test::shapeOf({32, 32, 1, 32, 32}, 9));
  CHECK(route.ran(nn::cpu::Pass::gradParameters) == (direct ? 0 : 2));
}
