// nn::Linear: reference values and gradient checks.
#include "nn/Linear.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "nn/Random.h"
#include "tests/DeviceTest.h"
#include "tests/GradCheck.h"

using nn::Tensor;

NN_DEVICE_TEST_CASE("Linear forward and backward match hand-computed values", "[Linear]") {
  nn::Linear linear(2, 3);
  linear.weight.copy_(Tensor::fromVector({3, 2}, {1, 2, 3, 4, 5, 6}));
  linear.bias.copy_(Tensor::fromVector({3}, {0.5f, -1, 2}));
  linear.to(kind.device());
  const Tensor x = kind.on(Tensor::fromVector({2, 2}, {1, -1, 0, 2}));
  // Row 1: [1-2+0.5, 3-4-1, 5-6+2]; row 2: [0+4+0.5, 0+8-1, 0+12+2].
  REQUIRE(nn::test::maxAbsDiff(linear.forward(x), {-0.5f, -2, 1, 4.5f, 7, 14}) == 0);

  const Tensor g = kind.on(Tensor::fromVector({2, 3}, {1, 0, -1, 0, 1, 0}));
  linear.zeroGradParameters();
  linear.backward(x, g);
  // gradInput = g W: row 1 = [1-5, 2-6], row 2 = [3, 4].
  REQUIRE(nn::test::maxAbsDiff(linear.gradInput, {-4, -4, 3, 4}) == 0);
  // gradWeight = g^T x: row i = sum_b g[b,i] x[b]: [1,-1], [0,2], [-1,1].
  REQUIRE(nn::test::maxAbsDiff(linear.gradWeight, {1, -1, 0, 2, -1, 1}) == 0);
  // gradBias = column sums of g.
  REQUIRE(nn::test::maxAbsDiff(linear.gradBias, {1, 1, -1}) == 0);

  // A second backward with scale 0.5 accumulates half as much again.
  linear.backward(x, g, 0.5f);
  REQUIRE(nn::test::maxAbsDiff(linear.gradBias, {1.5f, 1.5f, -1.5f}) == 0);
}

TEST_CASE("Linear gradients agree with finite differences", "[Linear]") {
  nn::manualSeed(3);
  nn::Linear linear(7, 5);
  const Tensor x = nn::test::randomTensor({4, 7}, 11);
  REQUIRE_THAT(nn::test::checkInputGradient(linear, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(linear, x), nn::test::EachAgreesWithin(1e-3, 2));
  const Tensor single = nn::test::randomTensor({7}, 12);
  REQUIRE_THAT(nn::test::checkInputGradient(linear, single), nn::test::AgreesWithin(1e-3));
}

TEST_CASE("Linear rejects a wrong input size with a message naming it", "[Linear]") {
  nn::Linear linear(800, 500);
  REQUIRE_THROWS_WITH(linear.forward(Tensor::zeros({4, 700})), Catch::Contains("nn.Linear(800 -> 500)") &&
                                                                   Catch::Contains("[4, 700]") &&
                                                                   Catch::Contains("800"));
}

TEST_CASE("Linear initialises uniformly in +-1/sqrt(inputSize)", "[Linear]") {
  nn::manualSeed(1);
  nn::Linear linear(100, 50);
  const float bound = 0.1f;
  float lo = 1, hi = -1;
  for (float v : linear.weight.toVector()) lo = std::min(lo, v), hi = std::max(hi, v);
  REQUIRE(lo >= -bound);
  REQUIRE(hi <= bound);
  REQUIRE(hi - lo > 1.9f * bound);  // 5000 draws fill the interval
  nn::manualSeed(1);
  nn::Linear again(100, 50);
  REQUIRE(nn::test::maxAbsDiff(linear.weight, again.weight) == 0);
}
