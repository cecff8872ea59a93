// nn::AbsCriterion, nn::SmoothL1Criterion, nn::DistKLDivCriterion and nn::BCECriterion (Torch7's,
// on nn::PointwiseCriterion with MSECriterion): hand-derived values on the kinks, PyTorch's
// committed (tests/reference/CriterionReference.h, from tests/reference/make_criterion_reference.py), finite
// differences away from the kinks, averaged and summed, BCE's weights, strided input, errors.
// On CPU devices and, where found, CUDA devices.
//
// The losses are sums in double rounded to float: within 1e-6 relative of PyTorch's float
// sums, on CUDA within 1 more ulp (another order of the double sum). The gradients are
// gradient(x, t) * norm * w in float: PyTorch multiplies in another order, within 2 ulps.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <memory>

#include "nn/criterions/AbsCriterion.h"
#include "nn/criterions/BCECriterion.h"
#include "nn/criterions/DistKLDivCriterion.h"
#include "nn/criterions/MSECriterion.h"
#include "nn/criterions/SmoothL1Criterion.h"
#include "tests/support/ActivationChecks.h"
#include "tests/reference/CriterionReference.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

constexpr double kEps = 1.0 / (1 << 24);

// A loss within 1e-6 relative of `want`, on CUDA 1 ulp more.
void checkLoss(const nn::test::DeviceKind& kind, float got, float want) {
  CAPTURE(got, want);
  CHECK(got == Approx(want).epsilon(1e-6).margin(kind.tolerance(2 * kEps * std::fabs(want))));
}

Tensor on(const nn::test::DeviceKind& kind, const std::vector<float>& values, std::vector<int64_t> sizes = {3, 4}) {
  return kind.on(Tensor::fromVector(sizes, values));
}

// The criterion built by `make(sizeAverage)` gives PyTorch's loss and gradient, averaged and summed.
void checkAgainstTorch(const nn::test::DeviceKind& kind,
                       const std::function<std::unique_ptr<nn::Criterion>(bool)>& make, const std::vector<float>& x,
                       const std::vector<float>& t, float mean, const std::vector<float>& meanGrad, float sum,
                       const std::vector<float>& sumGrad) {
  for (bool sizeAverage : {true, false}) {
    CAPTURE(sizeAverage);
    const std::unique_ptr<nn::Criterion> criterion = make(sizeAverage);
    const Tensor input = on(kind, x), target = on(kind, t);
    checkLoss(kind, criterion->forward(input, target), sizeAverage ? mean : sum);
    nn::test::checkWithinUlps(criterion->backward(input, target).toVector(), sizeAverage ? meanGrad : sumGrad, 2);
  }
}

template <typename C>
std::function<std::unique_ptr<nn::Criterion>(bool)> maker() {
  return [](bool sizeAverage) { return std::make_unique<C>(sizeAverage); };
}

// Finite differences of the loss averaged and summed, for input x and target t on the kind's device.
void checkGradients(const nn::test::DeviceKind& kind, const std::function<std::unique_ptr<nn::Criterion>(bool)>& make,
                    const Tensor& x, const Tensor& t, const nn::test::GradCheckOptions& options = {}) {
  for (bool sizeAverage : {true, false}) {
    CAPTURE(sizeAverage);
    const std::unique_ptr<nn::Criterion> criterion = make(sizeAverage);
    REQUIRE_THAT(nn::test::checkCriterionGradient(*criterion, kind.on(x), kind.on(t), options),
                 nn::test::AgreesWithin(1e-3));
  }
}

// x + d for random d away from the kinks of the difference.
Tensor shifted(const Tensor& x, uint64_t seed, float low, float high, std::initializer_list<float> kinks) {
  const Tensor d = nn::test::awayFromKinks(seed, low, high, kinks);
  Tensor out = x.clone();
  for (int64_t i = 0; i < out.numel(); ++i) out.data()[i] += d.data()[i];
  return out;
}

}  // namespace

// AbsCriterion

NN_DEVICE_TEST_CASE("AbsCriterion matches hand-computed values, with gradient 0 where input equals target",
                    "[AbsCriterion]") {
  const Tensor x = on(kind, {1, 2, 3, -1}, {2, 2}), t = on(kind, {0, 2, 5, -0.5f}, {2, 2});
  // Differences {1, 0, -2, -0.5}: |d| sums to 3.5, over 4 elements 0.875; the gradient is the
  // sign of d (0 at d = 0), over 4 when averaged.
  nn::AbsCriterion abs;
  REQUIRE(abs.forward(x, t) == 0.875f);
  REQUIRE(abs.backward(x, t).toVector() == std::vector<float>{0.25f, 0, -0.25f, -0.25f});
  nn::AbsCriterion summed(false);
  REQUIRE(summed.forward(x, t) == 3.5f);
  REQUIRE(summed.backward(x, t).toVector() == std::vector<float>{1, 0, -1, -1});
  REQUIRE(abs.toString() == "nn.AbsCriterion");
}

NN_DEVICE_TEST_CASE("AbsCriterion matches PyTorch 1.13", "[AbsCriterion]") {
  using namespace nn::test;
  checkAgainstTorch(kind, maker<nn::AbsCriterion>(), kLossX, kLossT, kTorchAbsMean, kTorchAbsMeanGradInput,
                    kTorchAbsSum, kTorchAbsSumGradInput);
}

NN_DEVICE_TEST_CASE("AbsCriterion gradient agrees with finite differences", "[AbsCriterion]") {
  const Tensor t = nn::test::randomTensor({3, 11}, 4);
  checkGradients(kind, maker<nn::AbsCriterion>(), shifted(t, 5, -2, 2, {0}), t);
}

// SmoothL1Criterion

NN_DEVICE_TEST_CASE("SmoothL1Criterion matches hand-computed values on both sides of |d| = 1", "[SmoothL1Criterion]") {
  const Tensor x = on(kind, {0.5f, 3, -1, 2}, {4}), t = on(kind, {0, 1, 0, 1}, {4});
  // Differences {0.5, 2, -1, 1}: terms 0.5 d^2 = 0.125 inside, |d| - 0.5 = 1.5, 0.5, 0.5 on and
  // outside the bound (both pieces give 0.5 at |d| = 1); sum 2.625, mean 0.65625. The gradient
  // is d inside, the sign of d outside, and 1 (both pieces) at |d| = 1.
  nn::SmoothL1Criterion smoothL1;
  REQUIRE(smoothL1.forward(x, t) == 0.65625f);
  REQUIRE(smoothL1.backward(x, t).toVector() == std::vector<float>{0.125f, 0.25f, -0.25f, 0.25f});
  nn::SmoothL1Criterion summed(false);
  REQUIRE(summed.forward(x, t) == 2.625f);
  REQUIRE(summed.backward(x, t).toVector() == std::vector<float>{0.5f, 1, -1, 1});
  REQUIRE(smoothL1.toString() == "nn.SmoothL1Criterion");
}

NN_DEVICE_TEST_CASE("SmoothL1Criterion matches PyTorch 1.13", "[SmoothL1Criterion]") {
  using namespace nn::test;
  checkAgainstTorch(kind, maker<nn::SmoothL1Criterion>(), kLossX, kLossT, kTorchSmoothL1Mean,
                    kTorchSmoothL1MeanGradInput, kTorchSmoothL1Sum, kTorchSmoothL1SumGradInput);
}

NN_DEVICE_TEST_CASE("SmoothL1Criterion gradient agrees with finite differences", "[SmoothL1Criterion]") {
  // Differences in [-3, 3] on both pieces; the derivative is continuous at |d| = 1, kinked at
  // none, but the second derivative jumps there: kept away as well.
  const Tensor t = nn::test::randomTensor({3, 11}, 6);
  checkGradients(kind, maker<nn::SmoothL1Criterion>(), shifted(t, 7, -3, 3, {-1, 1}), t);
}

// MSECriterion (the other tests are in criterion_test.cpp)

NN_DEVICE_TEST_CASE("MSECriterion on PointwiseCriterion matches PyTorch 1.13's gradients", "[MSECriterion]") {
  using namespace nn::test;
  checkAgainstTorch(kind, maker<nn::MSECriterion>(), kLossX, kLossT, kTorchMseMean, kTorchMseMeanGradInput,
                    kTorchMseSum, kTorchMseSumGradInput);
}

// DistKLDivCriterion

NN_DEVICE_TEST_CASE("DistKLDivCriterion matches hand-computed values, terms of target 0 left out",
                    "[DistKLDivCriterion]") {
  const Tensor x = on(kind, {-1, -2, -0.5f, -3}, {2, 2}), t = on(kind, {0.5f, 0.25f, 0, 0.25f}, {2, 2});
  // t (log t - x): 0.5 (1 - ln 2), 0.25 (2 - 2 ln 2), 0 (t = 0), 0.25 (3 - 2 ln 2); sum
  // 1.75 - 1.5 ln 2, over 4 elements when averaged. The gradient is -t.
  const double ln2 = std::log(2.0);
  const double sum = 1.75 - 1.5 * ln2;
  nn::DistKLDivCriterion kl;
  REQUIRE(kl.forward(x, t) == Approx(sum / 4).epsilon(1e-6));
  REQUIRE(kl.backward(x, t).toVector() == std::vector<float>{-0.125f, -0.0625f, 0, -0.0625f});
  nn::DistKLDivCriterion summed(false);
  REQUIRE(summed.forward(x, t) == Approx(sum).epsilon(1e-6));
  REQUIRE(summed.backward(x, t).toVector() == std::vector<float>{-0.5f, -0.25f, 0, -0.25f});
  REQUIRE(kl.toString() == "nn.DistKLDivCriterion");
}

NN_DEVICE_TEST_CASE("DistKLDivCriterion matches PyTorch 1.13 (reduction 'mean': over elements)",
                    "[DistKLDivCriterion]") {
  using namespace nn::test;
  checkAgainstTorch(kind, maker<nn::DistKLDivCriterion>(), kLossLogP, kLossP, kTorchDistKLDivMean,
                    kTorchDistKLDivMeanGradInput, kTorchDistKLDivSum, kTorchDistKLDivSumGradInput);
}

NN_DEVICE_TEST_CASE("DistKLDivCriterion gradient agrees with finite differences", "[DistKLDivCriterion]") {
  checkGradients(kind, maker<nn::DistKLDivCriterion>(), nn::test::randomTensor({3, 11}, 8, -4, 0),
                 nn::test::randomTensor({3, 11}, 9, 0.05f, 1));
}

// BCECriterion

NN_DEVICE_TEST_CASE("BCECriterion matches hand-computed values, finite at inputs 0 and 1", "[BCECriterion]") {
  const Tensor x = on(kind, {0.5f, 0.25f, 0, 1}, {4}), t = on(kind, {1, 0, 0, 1}, {4});
  // -(t ln x + (1 - t) ln(1 - x)): ln 2, ln 4/3, and 0 where x equals t at the ends; the
  // gradient (x - t) / (x (1 - x)): -2, 4/3, and 0 at the ends.
  const double sum = std::log(2.0) + std::log(4.0 / 3.0);
  nn::BCECriterion bce;
  REQUIRE(bce.forward(x, t) == Approx(sum / 4).epsilon(1e-6));
  nn::test::checkWithinUlps(bce.backward(x, t).toVector(), {-0.5f, 1.f / 3.f, 0, 0}, 1);
  nn::BCECriterion summed(false);
  REQUIRE(summed.forward(x, t) == Approx(sum).epsilon(1e-6));
  nn::test::checkWithinUlps(summed.backward(x, t).toVector(), {-2, 4.f / 3.f, 0, 0}, 1);
  // The wrong end: each log is at least -100, so the loss is 100 per element; the gradient's
  // denominator at least 1e-12.
  const Tensor ends = on(kind, {0, 1}, {2}), wrong = on(kind, {1, 0}, {2});
  REQUIRE(summed.forward(ends, wrong) == 200.f);
  nn::test::checkWithinUlps(summed.backward(ends, wrong).toVector(), {-1 / 1e-12f, 1 / 1e-12f}, 1);
  REQUIRE(bce.toString() == "nn.BCECriterion");
}

NN_DEVICE_TEST_CASE("BCECriterion weights scale each index of the last dimension", "[BCECriterion]") {
  const Tensor x = on(kind, {0.5f, 0.25f, 0.5f, 0.25f}, {2, 2}), t = on(kind, {1, 0, 0, 1}, {2, 2});
  // Weights {2, 0.5} over the columns: 2 ln 2, 0.5 ln 4/3, 2 ln 2, 0.5 ln 4; gradients 2 (-2),
  // 0.5 (4/3), 2 (2), 0.5 (-4).
  nn::BCECriterion summed(Tensor::fromVector({2}, {2, 0.5f}), false);
  const double ln2 = std::log(2.0);
  REQUIRE(summed.forward(x, t) == Approx(5 * ln2 + 0.5 * std::log(4.0 / 3.0)).epsilon(1e-6));
  nn::test::checkWithinUlps(summed.backward(x, t).toVector(), {-4, 2.f / 3.f, 4, -2}, 1);
  // Weights of ones change nothing; the weights live on the host and follow the input.
  nn::BCECriterion ones(Tensor::fromVector({2}, {1, 1}), false), plain(false);
  REQUIRE(ones.forward(x, t) == plain.forward(x, t));
  REQUIRE(ones.backward(x, t).toVector() == plain.backward(x, t).toVector());
  REQUIRE(summed.weights().device().isCpu());
  // The criterion shares the weights with the tensor it was given (Torch7's): changed there,
  // they count at the next call.
  Tensor shared = Tensor::fromVector({2}, {1, 1});
  nn::BCECriterion sharing(shared, false);
  REQUIRE(sharing.forward(x, t) == plain.forward(x, t));
  shared.copy_(Tensor::fromVector({2}, {2, 0.5f}));
  REQUIRE(sharing.forward(x, t) == summed.forward(x, t));
}

NN_DEVICE_TEST_CASE("BCECriterion matches PyTorch 1.13, with and without weights", "[BCECriterion]") {
  using namespace nn::test;
  checkAgainstTorch(kind, maker<nn::BCECriterion>(), kLossProb, kLossLabel, kTorchBceMean, kTorchBceMeanGradInput,
                    kTorchBceSum, kTorchBceSumGradInput);
  const auto weighted = [](bool sizeAverage) {
    return std::make_unique<nn::BCECriterion>(Tensor::fromVector({4}, kLossBceWeights), sizeAverage);
  };
  checkAgainstTorch(kind, weighted, kLossProb, kLossLabel, kTorchBceWeightedMean, kTorchBceWeightedMeanGradInput,
                    kTorchBceWeightedSum, kTorchBceWeightedSumGradInput);
}

NN_DEVICE_TEST_CASE("BCECriterion gradient agrees with finite differences, with and without weights",
                    "[BCECriterion]") {
  // The loss's third derivative grows as 2 / x^3 towards the ends: inputs in [0.2, 0.8] and a
  // step of 5e-3 keep the central differences' error (h^2 / 6 of it) below 2e-4 relative.
  const Tensor x = nn::test::randomTensor({3, 11}, 10, 0.2f, 0.8f);
  const Tensor t = nn::test::randomTensor({3, 11}, 11, 0, 1);
  nn::test::GradCheckOptions options;
  options.step = 5e-3f;
  checkGradients(kind, maker<nn::BCECriterion>(), x, t, options);
  const auto weighted = [](bool sizeAverage) {
    return std::make_unique<nn::BCECriterion>(nn::test::randomTensor({11}, 12, 0.5f, 2), sizeAverage);
  };
  checkGradients(kind, weighted, x, t, options);
}

NN_DEVICE_TEST_CASE("BCECriterion rejects input outside [0, 1] and weights of the wrong size", "[BCECriterion]") {
  const nn::Device device = kind.device();
  nn::BCECriterion bce;
  const Tensor t = Tensor::zeros({2, 2}, device);
  REQUIRE_THROWS_WITH(bce.forward(kind.on(Tensor::fromVector({2, 2}, {0.5f, 1.25f, 0, 1})), t),
                      Catch::Contains("nn.BCECriterion") && Catch::Contains("[0, 1]") && Catch::Contains("1.25") &&
                          Catch::Contains("position 1"));
  // Without a loss read, a CUDA device's check is reported when the host next waits for it.
  REQUIRE_THROWS_WITH(bce.backward(kind.on(Tensor::fromVector({2, 2}, {0.5f, 0, -0.5f, 1})), t).toVector(),
                      Catch::Contains("nn.BCECriterion") && Catch::Contains("-0.5"));
  REQUIRE_THROWS_WITH(bce.forward(kind.on(Tensor::fromVector({2, 2}, {0.5f, 0, NAN, 1})), t),
                      Catch::Contains("nn.BCECriterion") && Catch::Contains("nan"));
  nn::BCECriterion three(Tensor::fromVector({3}, {1, 1, 1}));
  REQUIRE_THROWS_WITH(three.forward(Tensor::zeros({2, 2}, device), t),
                      Catch::Contains("nn.BCECriterion") && Catch::Contains("[2]") && Catch::Contains("[3]"));
  REQUIRE_THROWS_WITH(nn::BCECriterion(Tensor::zeros({2, 2})),
                      Catch::Contains("nn.BCECriterion") && Catch::Contains("1-D") && Catch::Contains("[2, 2]"));
  REQUIRE_THROWS_WITH(nn::BCECriterion(Tensor::fromVector({2}, {1, INFINITY})),
                      Catch::Contains("nn.BCECriterion") && Catch::Contains("finite"));
}

// What the point-wise criterions share

NN_DEVICE_TEST_CASE("The point-wise criterions reject mismatched, empty and misplaced input, naming themselves",
                    "[AbsCriterion][SmoothL1Criterion][DistKLDivCriterion][BCECriterion]") {
  const nn::Device device = kind.device();
  nn::AbsCriterion abs;
  nn::SmoothL1Criterion smoothL1;
  nn::DistKLDivCriterion kl;
  nn::BCECriterion bce;
  for (nn::Criterion* c : std::initializer_list<nn::Criterion*>{&abs, &smoothL1, &kl, &bce}) {
    CAPTURE(c->toString());
    REQUIRE_THROWS_WITH(c->forward(Tensor::zeros({2, 3}, device), Tensor::zeros({3, 2}, device)),
                        Catch::Contains(c->toString()) && Catch::Contains("[2, 3]") && Catch::Contains("[3, 2]"));
    REQUIRE_THROWS_WITH(c->backward(Tensor::zeros({6}, device), Tensor::zeros({2, 3}, device)),
                        Catch::Contains(c->toString()) && Catch::Contains("[6]") && Catch::Contains("[2, 3]"));
    REQUIRE_THROWS_WITH(c->forward(Tensor::zeros({0}, device), Tensor::zeros({0}, device)),
                        Catch::Contains(c->toString()) && Catch::Contains("non-empty"));
    REQUIRE_THROWS_WITH(c->forward(Tensor::zeros({2}, device), Tensor::zeros({2}, kind.other())),
                        Catch::Contains(c->toString()) && Catch::Contains(kind.other().str()));
  }
}

NN_DEVICE_TEST_CASE("The point-wise criterions give the same result for strided input and target",
                    "[AbsCriterion][SmoothL1Criterion][DistKLDivCriterion][BCECriterion]") {
  nn::AbsCriterion abs;
  nn::SmoothL1Criterion smoothL1;
  nn::DistKLDivCriterion kl;
  nn::BCECriterion bce(Tensor::fromVector({2}, {0.5f, 2}));
  const Tensor x = kind.on(nn::test::randomTensor({4, 5}, 13, 0.05f, 0.95f)).narrow(1, 1, 2);
  const Tensor t = nn::test::stridedOn(nn::test::randomTensor({4, 2}, 14, 0, 1), kind.device());
  REQUIRE_FALSE(x.isContiguous());
  REQUIRE_FALSE(t.isContiguous());
  for (nn::Criterion* c : std::initializer_list<nn::Criterion*>{&abs, &smoothL1, &kl, &bce}) {
    CAPTURE(c->toString());
    REQUIRE(c->forward(x, t) == c->forward(x.contiguous(), t.contiguous()));
    const std::vector<float> g = c->backward(x.contiguous(), t.contiguous()).toVector();
    REQUIRE(c->backward(x, t).toVector() == g);
  }
}
