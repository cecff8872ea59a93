// nn::LeakyReLU (Torch7's nn.LeakyReLU): reference values by hand and from PyTorch, finite
// differences, in place, saving and errors; on CPU devices and, where found, CUDA devices.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>

#include "nn/modules/LeakyReLU.h"
#include "tests/support/ActivationChecks.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

// x, gradOutput, and what PyTorch 1.13 computes for them with negative_slope 0.2
// (torch.nn.functional.leaky_relu, autograd), printed to 9 digits.
const std::vector<float> kX{-3.f, -1.25f, -0.5f, -0.0625f, 0.f, 0.375f, 2.5f};
const std::vector<float> kGrad{0.5f, -1.f, 2.f, 1.5f, -0.75f, 3.f, -2.f};
const std::vector<float> kTorchOutput{-0.600000024f, -0.25f, -0.100000001f, -0.0125000002f, 0.f, 0.375f, 2.5f};
const std::vector<float> kTorchGradInput{0.100000001f,  -0.200000003f, 0.400000006f, 0.300000012f,
                                         -0.150000006f, 3.f,           -2.f};

}  // namespace

NN_DEVICE_TEST_CASE("LeakyReLU matches hand-computed values and PyTorch's, in place or not", "[LeakyReLU]") {
  for (bool inplace : {false, true}) {
    CAPTURE(inplace);
    nn::LeakyReLU leaky(0.2f, inplace);
    Tensor x = kind.on(Tensor::fromVector({7}, kX));
    Tensor g = kind.on(Tensor::fromVector({7}, kGrad));
    // y = x above 0, 0.2 x at and below it: one product each, as PyTorch rounds it.
    const std::vector<float> y = leaky.forward(x).toVector();
    CHECK(y == std::vector<float>{0.2f * -3.f, 0.2f * -1.25f, 0.2f * -0.5f, 0.2f * -0.0625f, 0.f, 0.375f, 2.5f});
    CHECK(y == kTorchOutput);
    // gradInput = gradOutput above 0, 0.2 gradOutput at and below it (at 0 too, as PyTorch).
    const std::vector<float> gi = leaky.backward(x, g).toVector();
    CHECK(gi == std::vector<float>{0.2f * 0.5f, 0.2f * -1.f, 0.2f * 2.f, 0.2f * 1.5f, 0.2f * -0.75f, 3.f, -2.f});
    CHECK(gi == kTorchGradInput);
    // In place, the input holds the output and gradOutput holds gradInput.
    if (inplace) {
      CHECK(x.toVector() == kTorchOutput);
      CHECK(g.toVector() == kTorchGradInput);
    } else {
      CHECK(x.toVector() == kX);
      CHECK(g.toVector() == kGrad);
    }
  }
}

NN_DEVICE_TEST_CASE("LeakyReLU gradients agree with finite differences, in place inside a network", "[LeakyReLU]") {
  const Tensor x = nn::test::awayFromZero(5, -1.f, 1.f);
  nn::LeakyReLU leaky(0.3f);
  leaky.to(kind.device());
  CHECK_THAT(nn::test::checkInputGradient(leaky, kind.on(x)), nn::test::AgreesWithin(1e-3));
  CHECK(leaky.parameters().first.empty());
  CHECK_THAT(nn::test::checkInPlaceInNetwork(kind, std::make_shared<nn::LeakyReLU>(0.3f, true), x),
             nn::test::AgreesWithin(1e-3));
}

NN_DEVICE_TEST_CASE("LeakyReLU keeps its slope and in-place setting through clone, save and load", "[LeakyReLU]") {
  nn::LeakyReLU leaky(0.25f, true);
  CHECK(leaky.toString() == "nn.LeakyReLU(negval=0.25, inplace=true)");
  CHECK(nn::LeakyReLU().options().negval == 0.01f);  // Torch7's default slope, 1/100
  auto copy = std::dynamic_pointer_cast<nn::LeakyReLU>(leaky.clone());
  REQUIRE(copy);
  CHECK(copy->options().negval == 0.25f);
  CHECK(copy->inplace());
  auto loaded = std::dynamic_pointer_cast<nn::LeakyReLU>(nn::test::savedAndLoaded(leaky));
  REQUIRE(loaded);
  CHECK(loaded->options().negval == 0.25f);
  CHECK(loaded->inplace());
  const Tensor x = kind.on(Tensor::fromVector({2}, {-4.f, 4.f}));
  CHECK(loaded->forward(x).toVector() == std::vector<float>{-1.f, 4.f});
}

NN_DEVICE_TEST_CASE("LeakyReLU refuses a negative slope in place and a gradOutput of another size", "[LeakyReLU]") {
  CHECK_THROWS_WITH(nn::LeakyReLU(-0.1f, true), Catch::Contains("nn.LeakyReLU: in place needs negval >= 0, got -0.1"));
  CHECK_NOTHROW(nn::LeakyReLU(-0.1f, false));
  nn::LeakyReLU leaky;
  const Tensor x = kind.on(Tensor::zeros({2, 3}));
  leaky.forward(x);
  CHECK_THROWS_WITH(leaky.backward(x, kind.on(Tensor::zeros({3, 2}))),
                    Catch::Contains("nn.LeakyReLU(negval=0.01, inplace=false)") && Catch::Contains("[2, 3]") &&
                        Catch::Contains("[3, 2]"));
}
