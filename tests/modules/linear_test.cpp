// nn::Linear: reference values, gradient checks and errors on every device type, and the
// module on another device compared with the one on the host.
#include "nn/modules/Linear.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>

#include "nn/tensor/Random.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

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

NN_DEVICE_TEST_CASE("Linear gradients agree with finite differences", "[Linear]") {
  nn::manualSeed(3);
  nn::Linear linear(7, 5);
  linear.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({4, 7}, 11));
  REQUIRE_THAT(nn::test::checkInputGradient(linear, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(linear, x), nn::test::EachAgreesWithin(1e-3, 2));
  const Tensor single = kind.on(nn::test::randomTensor({7}, 12));
  REQUIRE_THAT(nn::test::checkInputGradient(linear, single), nn::test::AgreesWithin(1e-3));
}

NN_DEVICE_TEST_CASE("Linear rejects a wrong input size with a message naming it", "[Linear]") {
  nn::Linear linear(800, 500);
  linear.to(kind.device());
  REQUIRE_THROWS_WITH(
      linear.forward(Tensor::zeros({4, 700}, kind.device())),
      Catch::Contains("nn.Linear(800 -> 500)") && Catch::Contains("[4, 700]") && Catch::Contains("800"));
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

NN_DEVICE_TEST_CASE("Linear on another device gives the host module's output and gradients", "[Linear]") {
  // Odd sizes, a 3-D input (the batch is every dimension but the last), with and without bias.
  for (bool withBias : {true, false}) {
    CAPTURE(withBias);
    nn::manualSeed(5);
    auto reference = std::make_shared<nn::Linear>(37, 23, withBias);
    auto tested = std::dynamic_pointer_cast<nn::Linear>(reference->clone());
    tested->to(kind.compared());
    const Tensor x = nn::test::randomTensor({3, 19, 37}, 51);
    const Tensor g = nn::test::randomTensor({3, 19, 23}, 52);
    const Tensor xOn = x.to(kind.compared()), gOn = g.to(kind.compared());
    const Tensor y = reference->forward(x).clone();
    const Tensor& yOn = tested->forward(xOn);
    REQUIRE(yOn.device() == kind.compared());
    reference->zeroGradParameters();
    tested->zeroGradParameters();
    const Tensor gi = reference->backward(x, g, 0.5f).clone();
    const Tensor giOn = tested->backward(xOn, gOn, 0.5f).clone();
    // cuBLAS adds the products of a dot product in another order than OpenBLAS: sums of at
    // most 57 products of numbers below 1, so a few ulp of their size. On cpu:1 the same
    // OpenBLAS calls as on cpu:0: the same bits.
    const double tolerance = kind.tolerance(1e-5);
    REQUIRE(nn::test::maxAbsDiff(yOn, y) <= tolerance);
    REQUIRE(nn::test::maxAbsDiff(giOn, gi) <= tolerance);
    auto [referenceValues, referenceGradients] = reference->parameters();
    auto [testedValues, testedGradients] = tested->parameters();
    REQUIRE(testedGradients.size() == (withBias ? 2u : 1u));
    REQUIRE(testedGradients.size() == referenceGradients.size());
    for (size_t p = 0; p < referenceGradients.size(); ++p) {
      REQUIRE(testedGradients[p].device() == kind.compared());
      REQUIRE(nn::test::maxAbsDiff(testedGradients[p], referenceGradients[p]) <= tolerance);
    }
  }
}
