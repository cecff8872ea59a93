// nn::MultiMarginCriterion (Torch7's, PyTorch's multi_margin_loss): hand-derived values with a
// margin met exactly, PyTorch's committed (tests/reference/CriterionReference.h, from
// tests/reference/make_criterion_reference.py) for p 1 and 2, margins and class weights, finite
// differences away from the hinge, averaged and summed, strided input, errors. On CPU devices
// and, where found, CUDA devices: no libm is involved, so every device computes the same floats.
#include "nn/criterions/MultiMarginCriterion.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "tests/support/ActivationChecks.h"
#include "tests/reference/CriterionReference.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

constexpr double kEps = 1.0 / (1 << 24);

Tensor scores(const nn::test::DeviceKind& kind) { return kind.on(Tensor::fromVector({3, 5}, nn::test::kLossScores)); }
Tensor classes(const nn::test::DeviceKind& kind) { return kind.on(Tensor::fromVector({3}, nn::test::kLossClasses)); }

// The criterion gives PyTorch's loss and gradient for the reference scores and classes.
void checkAgainstTorch(const nn::test::DeviceKind& kind, nn::MultiMarginCriterion& criterion, float want,
                       const std::vector<float>& wantGrad) {
  CAPTURE(criterion.toString(), criterion.sizeAverage);
  const float loss = criterion.forward(scores(kind), classes(kind));
  CHECK(loss == Approx(want).epsilon(1e-6).margin(kind.tolerance(2 * kEps * std::fabs(want))));
  nn::test::checkWithinUlps(criterion.backward(scores(kind), classes(kind)).toVector(), wantGrad, 2);
}

// [batch, n] random scores, each margin - x_y + x_j moved to at least 0.05 from the hinge.
Tensor awayFromHinge(int64_t batch, int64_t n, const Tensor& target, float margin, uint64_t seed) {
  Tensor x = nn::test::randomTensor({batch, n}, seed, -2, 2);
  for (int64_t i = 0; i < batch; ++i) {
    float* row = x.data() + i * n;
    const int64_t y = static_cast<int64_t>(target.data()[i]);
    for (int64_t j = 0; j < n; ++j) {
      const float z = margin - row[y] + row[j];
      if (j != y && std::fabs(z) < 0.05f) row[j] += z < 0 ? -0.1f : 0.1f;
    }
  }
  return x;
}

}  // namespace

NN_DEVICE_TEST_CASE("MultiMarginCriterion matches hand-computed values, nothing at the hinge itself",
                    "[MultiMarginCriterion]") {
  // p = 1, margin 1; z_j = 1 - x_y + x_j for j != y. Row 0 (y = 2): z = {-0.5, -2, ., -0.75,
  // 0.5}: loss 0.5 / 5. Row 1 (y = 0): z = {., -1, -2.5, 0, -2}: 0, the margin met exactly
  // adds nothing to the loss nor to the gradient. Row 2 (y = 4): z = {0.25, 1.25, 1.75, -1, .}:
  // 3.25 / 5. Sum 0.75, mean over 3 rows 0.25. The gradient is 1 / 5 per positive z and minus
  // their sum at y, over 3 when averaged.
  nn::MultiMarginCriterion summed(1, Tensor(), 1.f, false);
  REQUIRE(summed.forward(scores(kind), classes(kind)) == 0.75f);
  nn::test::checkWithinUlps(summed.backward(scores(kind), classes(kind)).toVector(),
                            {0, 0, -0.2f, 0, 0.2f, 0, 0, 0, 0, 0, 0.2f, 0.2f, 0.2f, 0, -0.6f}, 1);
  nn::MultiMarginCriterion averaged;
  REQUIRE(averaged.forward(scores(kind), classes(kind)) == 0.25f);
  const float third = 1.f / 15.f;
  nn::test::checkWithinUlps(averaged.backward(scores(kind), classes(kind)).toVector(),
                            {0, 0, -third, 0, third, 0, 0, 0, 0, 0, third, third, third, 0, -3 * third}, 1);
  // p = 2, margin 0.5: rows 0 and 1 have no positive z; row 2 (x_y = 0.5) has z = x_j =
  // {-0.25, 0.75, 1.25, -1.5}: (0.5625 + 1.5625) / 5 = 0.425; gradient 2 z / 5.
  nn::MultiMarginCriterion squared(2, Tensor(), 0.5f, false);
  REQUIRE(squared.forward(scores(kind), classes(kind)) == Approx(0.425).epsilon(1e-7));
  nn::test::checkWithinUlps(squared.backward(scores(kind), classes(kind)).toVector(),
                            {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.3f, 0.5f, 0, -0.8f}, 1);
  // One row of scores [classes] with a target of one element: a batch of 1.
  const Tensor row = kind.on(Tensor::fromVector({5}, {-0.25f, 0.75f, 1.25f, -1.5f, 0.5f}));
  const Tensor rowTarget = kind.on(Tensor::fromVector({1}, {4}));
  REQUIRE(averaged.forward(row, rowTarget) == Approx(0.65).epsilon(1e-7));
  nn::test::checkWithinUlps(averaged.backward(row, rowTarget).toVector(), {0.2f, 0.2f, 0.2f, 0, -0.6f}, 1);
  REQUIRE(averaged.gradInput.sizes() == std::vector<int64_t>{5});
}

NN_DEVICE_TEST_CASE("MultiMarginCriterion class weights scale each row by its target's weight",
                    "[MultiMarginCriterion]") {
  // Weights {1, 0.5, 2, 1.5, 0.25}, p = 1, margin 1: rows 0 and 2 above scaled by w_2 = 2 and
  // w_4 = 0.25: (2 * 0.5 + 0.25 * 3.25) / 5 = 0.3625, summed.
  nn::MultiMarginCriterion weighted(1, Tensor::fromVector({5}, nn::test::kLossMarginWeights), 1.f, false);
  REQUIRE(weighted.forward(scores(kind), classes(kind)) == Approx(0.3625).epsilon(1e-7));
  nn::test::checkWithinUlps(weighted.backward(scores(kind), classes(kind)).toVector(),
                            {0, 0, -0.4f, 0, 0.4f, 0, 0, 0, 0, 0, 0.05f, 0.05f, 0.05f, 0, -0.15f}, 1);
  REQUIRE(weighted.weights().device().isCpu());
}

NN_DEVICE_TEST_CASE("MultiMarginCriterion matches PyTorch 1.13", "[MultiMarginCriterion]") {
  using namespace nn::test;
  for (bool sizeAverage : {true, false}) {
    nn::MultiMarginCriterion p1(1, Tensor(), 1.f, sizeAverage);
    checkAgainstTorch(kind, p1, sizeAverage ? kTorchMultiMarginP1Mean : kTorchMultiMarginP1Sum,
                      sizeAverage ? kTorchMultiMarginP1MeanGradInput : kTorchMultiMarginP1SumGradInput);
    nn::MultiMarginCriterion p2(2, Tensor(), 0.5f, sizeAverage);
    checkAgainstTorch(kind, p2, sizeAverage ? kTorchMultiMarginP2Mean : kTorchMultiMarginP2Sum,
                      sizeAverage ? kTorchMultiMarginP2MeanGradInput : kTorchMultiMarginP2SumGradInput);
    nn::MultiMarginCriterion weighted(1, Tensor::fromVector({5}, kLossMarginWeights), 2.f, sizeAverage);
    checkAgainstTorch(kind, weighted, sizeAverage ? kTorchMultiMarginWeightedMean : kTorchMultiMarginWeightedSum,
                      sizeAverage ? kTorchMultiMarginWeightedMeanGradInput : kTorchMultiMarginWeightedSumGradInput);
  }
}

NN_DEVICE_TEST_CASE("MultiMarginCriterion gradient agrees with finite differences", "[MultiMarginCriterion]") {
  const Tensor target = Tensor::fromVector({4}, {0, 3, 6, 2});
  for (int p : {1, 2}) {
    for (bool sizeAverage : {true, false}) {
      for (float margin : {1.f, 0.5f}) {
        CAPTURE(p, sizeAverage, margin);
        const Tensor x = awayFromHinge(4, 7, target, margin, 20 + p);
        nn::MultiMarginCriterion plain(p, Tensor(), margin, sizeAverage);
        REQUIRE_THAT(nn::test::checkCriterionGradient(plain, kind.on(x), kind.on(target)),
                     nn::test::AgreesWithin(1e-3));
        nn::MultiMarginCriterion weighted(p, nn::test::randomTensor({7}, 30, 0.5f, 2), margin, sizeAverage);
        REQUIRE_THAT(nn::test::checkCriterionGradient(weighted, kind.on(x), kind.on(target)),
                     nn::test::AgreesWithin(1e-3));
      }
    }
  }
}

NN_DEVICE_TEST_CASE("MultiMarginCriterion gives the same result for strided input and target",
                    "[MultiMarginCriterion]") {
  nn::MultiMarginCriterion criterion(2, Tensor::fromVector({4}, {1, 0.5f, 2, 1.5f}));
  const Tensor x = kind.on(nn::test::randomTensor({3, 7}, 40, -2, 2)).narrow(1, 2, 4);
  const Tensor t = nn::test::stridedOn(Tensor::fromVector({3}, {1, 3, 0}), kind.device());
  REQUIRE_FALSE(x.isContiguous());
  REQUIRE_FALSE(t.isContiguous());
  REQUIRE(criterion.forward(x, t) == criterion.forward(x.contiguous(), t.contiguous()));
  const std::vector<float> g = criterion.backward(x.contiguous(), t.contiguous()).toVector();
  REQUIRE(criterion.backward(x, t).toVector() == g);
}

NN_DEVICE_TEST_CASE("MultiMarginCriterion rejects bad settings, targets and weights, naming itself",
                    "[MultiMarginCriterion]") {
  const nn::Device device = kind.device();
  REQUIRE_THROWS_WITH(nn::MultiMarginCriterion(3),
                      Catch::Contains("nn.MultiMarginCriterion") && Catch::Contains("p 1 or 2") && Catch::Contains("3"));
  REQUIRE_THROWS_WITH(nn::MultiMarginCriterion(1, Tensor(), NAN),
                      Catch::Contains("nn.MultiMarginCriterion") && Catch::Contains("finite margin"));
  REQUIRE_THROWS_WITH(nn::MultiMarginCriterion(1, Tensor::zeros({2, 2})),
                      Catch::Contains("nn.MultiMarginCriterion") && Catch::Contains("1-D") && Catch::Contains("[2, 2]"));
  REQUIRE_THROWS_WITH(nn::MultiMarginCriterion(1, Tensor::fromVector({3}, {1, NAN, 1})),
                      Catch::Contains("nn.MultiMarginCriterion: expected finite weights, got nan at 1"));
  nn::MultiMarginCriterion criterion;
  REQUIRE(criterion.toString() == "nn.MultiMarginCriterion(p=1, margin=1)");
  const Tensor x = Tensor::zeros({2, 3}, device);
  REQUIRE_THROWS_WITH(criterion.forward(x, kind.on(Tensor::fromVector({2}, {0, 3}))),
                      Catch::Contains("nn.MultiMarginCriterion") && Catch::Contains("3"));
  REQUIRE_THROWS_WITH(criterion.forward(x, kind.on(Tensor::fromVector({3}, {0, 1, 2}))),
                      Catch::Contains("nn.MultiMarginCriterion") && Catch::Contains("[2]") && Catch::Contains("[3]"));
  REQUIRE_THROWS_WITH(criterion.forward(Tensor::zeros({2, 3, 1}, device), Tensor::zeros({2}, device)),
                      Catch::Contains("nn.MultiMarginCriterion") && Catch::Contains("[2, 3, 1]"));
  REQUIRE_THROWS_WITH(criterion.backward(x, Tensor::zeros({2}, kind.other())),
                      Catch::Contains("nn.MultiMarginCriterion") && Catch::Contains(kind.other().str()));
  nn::MultiMarginCriterion four(1, Tensor::fromVector({4}, {1, 1, 1, 1}));
  REQUIRE_THROWS_WITH(four.forward(x, Tensor::zeros({2}, device)), Catch::Contains("nn.MultiMarginCriterion") &&
                                                                       Catch::Contains("3 weights") &&
                                                                       Catch::Contains("[4]"));
}
