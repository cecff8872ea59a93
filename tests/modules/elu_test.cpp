// nn::ELU (Torch7's nn.ELU): reference values by hand and from PyTorch, finite differences, in
// place, saving and errors; on CPU devices and, where found, CUDA devices.
#include "nn/modules/ELU.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>

#include "tests/support/ActivationChecks.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

// x, gradOutput, and what PyTorch 1.13 computes for them with alpha 0.7 (torch.nn.functional.elu,
// autograd), printed to 9 digits. Below 0 both go through exp (PyTorch's expm1, our expm1f on
// the host, CUDA's own on the GPU), each within an ulp or two of the exact value.
const std::vector<float> kX{-3.f, -1.25f, -0.5f, -0.0625f, 0.f, 0.375f, 2.5f};
const std::vector<float> kGrad{0.5f, -1.f, 2.f, 1.5f, -0.75f, 3.f, -2.f};
const std::vector<float> kTorchOutput{-0.665149033f, -0.49944663f, -0.275428534f, -0.0424108505f, 0.f, 0.375f, 2.5f};
const std::vector<float> kTorchGradInput{0.0174254738f, -0.200553358f, 0.849142909f, 0.986383677f,
                                         -0.524999976f, 3.f,           -2.f};

}  // namespace

NN_DEVICE_TEST_CASE("ELU matches hand-computed values and PyTorch's, in place or not", "[ELU]") {
  for (bool inplace : {false, true}) {
    CAPTURE(inplace);
    nn::ELU elu(0.7f, inplace);
    Tensor x = kind.on(Tensor::fromVector({7}, kX));
    Tensor g = kind.on(Tensor::fromVector({7}, kGrad));
    // y = x above 0, 0.7 (e^x - 1) at and below it: -0.7 (1 - e^-3) = -0.66514903...
    const std::vector<float> y = elu.forward(x).toVector();
    nn::test::checkWithinUlps(y, kTorchOutput, 4);
    CHECK(y[4] == 0.f);
    CHECK(y[5] == 0.375f);
    CHECK(y[6] == 2.5f);
    CHECK(std::fabs(y[0] - 0.7 * std::expm1(-3.0)) < 1e-7);
    // gradInput = gradOutput above 0, gradOutput (y + 0.7) at and below it: at x = 0, 0.7 gradOutput.
    const std::vector<float> gi = elu.backward(x, g).toVector();
    nn::test::checkWithinUlps(gi, kTorchGradInput, 4);
    CHECK(gi[4] == -0.75f * (0.f + 0.7f));
    CHECK(gi[6] == -2.f);
    if (inplace) {
      CHECK(x.toVector() == y);
      CHECK(g.toVector() == gi);
    } else {
      CHECK(x.toVector() == kX);
      CHECK(g.toVector() == kGrad);
    }
  }
}

NN_DEVICE_TEST_CASE("ELU gradients agree with finite differences, in place inside a network", "[ELU]") {
  const Tensor x = nn::test::awayFromZero(6, -2.f, 2.f);
  nn::ELU elu(1.3f);
  elu.to(kind.device());
  CHECK_THAT(nn::test::checkInputGradient(elu, kind.on(x)), nn::test::AgreesWithin(1e-3));
  CHECK(elu.parameters().first.empty());
  CHECK_THAT(nn::test::checkInPlaceInNetwork(kind, std::make_shared<nn::ELU>(1.3f, true), x),
             nn::test::AgreesWithin(1e-3));
}

NN_DEVICE_TEST_CASE("ELU with a negative alpha takes its gradient's branch from x, not y", "[ELU]") {
  // alpha = -0.5: at x = -1, y = -0.5 (e^-1 - 1) = 0.3160603 > 0, yet the slope is alpha e^x =
  // -0.5 e^-1 = -0.1839397 (y + alpha), not 1 as where x > 0; at x = 2, y = 2 and the slope is 1.
  nn::ELU elu(-0.5f);
  elu.to(kind.device());
  const Tensor x = kind.on(Tensor::fromVector({2}, {-1.f, 2.f}));
  const std::vector<float> y = elu.forward(x).toVector();
  CHECK(y[0] > 0.f);
  CHECK(std::fabs(y[0] - 0.5 * (1.0 - std::exp(-1.0))) < 1e-7);
  CHECK(y[1] == 2.f);
  const std::vector<float> gi = elu.backward(x, kind.on(Tensor::fromVector({2}, {3.f, 3.f}))).toVector();
  CHECK(gi[0] == 3.f * (y[0] + -0.5f));
  CHECK(std::fabs(gi[0] - 3.0 * -0.5 * std::exp(-1.0)) < 1e-6);
  CHECK(gi[1] == 3.f);
  CHECK_THAT(nn::test::checkInputGradient(elu, kind.on(nn::test::awayFromZero(6, -2.f, 2.f))),
             nn::test::AgreesWithin(1e-3));
}

NN_DEVICE_TEST_CASE("ELU keeps its alpha and in-place setting through clone, save and load", "[ELU]") {
  nn::ELU elu(0.5f, true);
  CHECK(elu.toString() == "nn.ELU(alpha=0.5, inplace=true)");
  CHECK(nn::ELU().options().alpha == 1.f);  // Torch7's default
  auto copy = std::dynamic_pointer_cast<nn::ELU>(elu.clone());
  REQUIRE(copy);
  CHECK(copy->options().alpha == 0.5f);
  CHECK(copy->inplace());
  auto loaded = std::dynamic_pointer_cast<nn::ELU>(nn::test::savedAndLoaded(elu));
  REQUIRE(loaded);
  CHECK(loaded->options().alpha == 0.5f);
  CHECK(loaded->inplace());
  const Tensor x = kind.on(Tensor::fromVector({2}, {-100.f, 4.f}));
  CHECK(loaded->forward(x).toVector() == std::vector<float>{-0.5f, 4.f});  // e^-100 - 1 rounds to -1
}

NN_DEVICE_TEST_CASE("ELU refuses a negative alpha in place and a gradOutput of another size", "[ELU]") {
  CHECK_THROWS_WITH(nn::ELU(-1.f, true), Catch::Contains("nn.ELU: in place needs alpha >= 0, got -1"));
  CHECK_NOTHROW(nn::ELU(-1.f, false));
  nn::ELU elu;
  const Tensor x = kind.on(Tensor::zeros({2, 3}));
  elu.forward(x);
  CHECK_THROWS_WITH(
      elu.backward(x, kind.on(Tensor::zeros({3, 2}))),
      Catch::Contains("nn.ELU(alpha=1, inplace=false)") && Catch::Contains("[2, 3]") && Catch::Contains("[3, 2]"));
}
