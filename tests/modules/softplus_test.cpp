// nn::SoftPlus (Torch7's nn.SoftPlus(beta, threshold), PyTorch's formulas): reference values by
// hand and from PyTorch (tests/reference/ActivationReference.h, from tests/reference/make_activation_reference.py),
// finite differences, clone, save and load, errors; on CPU devices and, where found, CUDA
// devices.
#include "nn/modules/SoftPlus.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>

#include "tests/support/ActivationChecks.h"
#include "tests/reference/ActivationReference.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

NN_DEVICE_TEST_CASE("SoftPlus matches hand-computed values and PyTorch's", "[SoftPlus]") {
  nn::SoftPlus softPlus(2.f, 5.f);
  CHECK(softPlus.toString() == "nn.SoftPlus(beta=2, threshold=5)");
  const auto [y, gi] =
      nn::test::runPasses(kind, softPlus, nn::test::kActivationX, nn::test::kActivationGrad, false);
  // Through exp and log1p: within a few ulp of PyTorch's (the host's libm and CUDA's round their
  // last bits their own ways).
  nn::test::checkWithinUlps(y, nn::test::kTorchSoftPlus, 4);
  nn::test::checkWithinUlps(gi, nn::test::kTorchSoftPlusGradInput, 4);
  // At 0: log(2) / 2 = 0.34657359, and the gradient 1/2 of gradOutput 3.
  CHECK(std::fabs(y[5] - std::log(2.0) / 2) < 1e-7);
  CHECK(gi[5] == 1.5f);
  // Above the threshold (2 x > 5) the identity, with the gradient passed as it is: 6, 7.5, 25.
  CHECK(std::vector<float>(y.begin() + 10, y.end()) == std::vector<float>{6.f, 7.5f, 25.f});
  CHECK(std::vector<float>(gi.begin() + 10, gi.end()) == std::vector<float>{4.f, -3.f, 1.f});
  // 2.5 is on the threshold, not above it: log(1 + e^5) / 2 = 2.50335765.
  CHECK(std::fabs(y[9] - std::log1p(std::exp(5.0)) / 2) < 4e-7);
}

NN_DEVICE_TEST_CASE("SoftPlus gradients agree with finite differences", "[SoftPlus]") {
  nn::SoftPlus softPlus(1.5f, 4.f);
  softPlus.to(kind.device());
  // Away from the switch to the identity at x = 4 / 1.5, where the two branches differ slightly.
  const Tensor x = nn::test::awayFromKinks(8, -4.f, 4.f, {4.f / 1.5f});
  CHECK_THAT(nn::test::checkInputGradient(softPlus, kind.on(x)), nn::test::AgreesWithin(1e-3));
  CHECK(softPlus.parameters().first.empty());
}

NN_DEVICE_TEST_CASE("SoftPlus keeps its settings through clone, save and load, and refuses bad ones", "[SoftPlus]") {
  nn::SoftPlus softPlus(0.5f, 10.f);
  const Tensor x = kind.on(Tensor::fromVector({13}, nn::test::kActivationX));
  const std::vector<float> y = softPlus.forward(x).toVector();
  for (const nn::ModulePtr& copy : {softPlus.clone(), nn::test::savedAndLoaded(softPlus)}) {
    CHECK(copy->toString() == "nn.SoftPlus(beta=0.5, threshold=10)");
    copy->to(kind.device());
    CHECK(copy->forward(x).toVector() == y);
  }
  CHECK(nn::SoftPlus().toString() == "nn.SoftPlus(beta=1, threshold=20)");  // Torch7's defaults
  CHECK_THROWS_WITH(nn::SoftPlus(0.f), Catch::Contains("nn.SoftPlus: expected a finite beta > 0") &&
                                           Catch::Contains("got beta 0 and threshold 20"));
  CHECK_THROWS_WITH(nn::SoftPlus(1.f, NAN), Catch::Contains("nn.SoftPlus") && Catch::Contains("nan"));
  softPlus.forward(x);
  CHECK_THROWS_WITH(softPlus.backward(x, kind.on(Tensor::zeros({12}))),
                    Catch::Contains("nn.SoftPlus") && Catch::Contains("[13]") && Catch::Contains("[12]"));
}
