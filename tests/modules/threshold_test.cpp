// nn::Threshold, nn::HardTanh and nn::ReLU6 (Torch7's): the activations that compare x with
// bounds. Reference values by hand and from PyTorch (tests/reference/ActivationReference.h, from
// tests/reference/make_activation_reference.py), on the bounds too; finite differences away from them, in
// place inside a network; clone, save and load; errors. On CPU devices and, where found, CUDA
// devices: no libm is involved, so every device gives PyTorch's values to the bit.
#include "nn/modules/Threshold.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>

#include "nn/modules/HardTanh.h"
#include "nn/modules/ReLU6.h"
#include "tests/support/ActivationChecks.h"
#include "tests/reference/ActivationReference.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

// The module's passes over PyTorch's inputs, in place or not, equal PyTorch's to the bit.
void checkAgainstTorch(const nn::test::DeviceKind& kind, nn::Module& module, bool inplace,
                       const std::vector<float>& output, const std::vector<float>& gradInput) {
  const auto [y, gi] = nn::test::runPasses(kind, module, nn::test::kActivationX, nn::test::kActivationGrad, inplace);
  CHECK(y == output);
  CHECK(gi == gradInput);
}

// Clone and save/load keep the type and settings: the copies print alike and compute alike.
void checkCopies(const nn::test::DeviceKind& kind, nn::Module& module) {
  const Tensor x = kind.on(Tensor::fromVector({13}, nn::test::kActivationX));
  const std::vector<float> y = module.forward(x).toVector();
  for (const nn::ModulePtr& copy : {module.clone(), nn::test::savedAndLoaded(module)}) {
    CHECK(copy->typeName() == module.typeName());
    CHECK(copy->toString() == module.toString());
    copy->to(kind.device());
    CHECK(copy->forward(kind.on(Tensor::fromVector({13}, nn::test::kActivationX))).toVector() == y);
  }
}

}  // namespace

NN_DEVICE_TEST_CASE("Threshold keeps x above th and gives v elsewhere, in place or not", "[Threshold]") {
  for (bool inplace : {false, true}) {
    CAPTURE(inplace);
    nn::Threshold threshold(0.5f, -2.f, inplace);
    // x = 0.5 is not above th: v, and no gradient; x = 0.625 passes with its gradient.
    const auto [y, gi] = nn::test::runPasses(kind, threshold, {0.5f, 0.625f, -3.f}, {1.f, 2.f, 3.f}, inplace);
    CHECK(y == std::vector<float>{-2.f, 0.625f, -2.f});
    CHECK(gi == std::vector<float>{0.f, 2.f, 0.f});
    checkAgainstTorch(kind, threshold, inplace, nn::test::kTorchThreshold, nn::test::kTorchThresholdGradInput);
  }
  nn::Threshold defaults;
  CHECK(defaults.toString() == "nn.Threshold(threshold=1e-06, value=0, inplace=false)");  // Torch7's defaults
}

NN_DEVICE_TEST_CASE("Threshold keeps NaN and passes its gradient, as PyTorch's threshold, in place or not",
                    "[Threshold]") {
  for (bool inplace : {false, true}) {
    CAPTURE(inplace);
    nn::Threshold threshold(0.f, -2.f, inplace);
    // PyTorch: threshold(x) = x <= th ? v : x, and its backward x <= th ? 0 : g: NaN is not
    // <= th, so it stays and its gradient passes; -0 <= 0 gives v.
    Tensor x = kind.on(Tensor::fromVector({4}, {std::nanf(""), -0.f, 1.f, -1.f}));
    Tensor g = kind.on(Tensor::fromVector({4}, {1.f, 2.f, 3.f, 4.f}));
    const std::vector<float> y = threshold.forward(x).toVector();
    CHECK(std::isnan(y[0]));
    CHECK(std::vector<float>(y.begin() + 1, y.end()) == std::vector<float>{-2.f, 1.f, -2.f});
    CHECK(threshold.backward(x, g).toVector() == std::vector<float>{1.f, 0.f, 3.f, 0.f});
  }
}

NN_DEVICE_TEST_CASE("HardTanh clamps to [min, max] and passes the gradient strictly inside", "[HardTanh]") {
  for (bool inplace : {false, true}) {
    CAPTURE(inplace);
    nn::HardTanh hardTanh(-1.f, 2.5f, inplace);
    // On a bound the output is the bound and the gradient 0, as PyTorch's.
    const auto [y, gi] = nn::test::runPasses(kind, hardTanh, {-1.f, 2.5f, 3.f, 0.25f}, {1.f, 2.f, 3.f, 4.f}, inplace);
    CHECK(y == std::vector<float>{-1.f, 2.5f, 2.5f, 0.25f});
    CHECK(gi == std::vector<float>{0.f, 0.f, 0.f, 4.f});
    checkAgainstTorch(kind, hardTanh, inplace, nn::test::kTorchHardTanh, nn::test::kTorchHardTanhGradInput);
  }
  // NaN stays NaN, and its gradient passes (PyTorch's hardtanh_backward tests x <= min or x >= max).
  nn::HardTanh hardTanh;
  const Tensor nan = kind.on(Tensor::fromVector({1}, {std::nanf("")}));
  CHECK(std::isnan(hardTanh.forward(nan).toVector()[0]));
  CHECK(hardTanh.backward(nan, kind.on(Tensor::fromVector({1}, {5.f}))).toVector() == std::vector<float>{5.f});
  CHECK(hardTanh.toString() == "nn.HardTanh(min=-1, max=1, inplace=false)");  // Torch7's defaults
}

NN_DEVICE_TEST_CASE("ReLU6 clamps to [0, 6] as HardTanh(0, 6)", "[ReLU6]") {
  for (bool inplace : {false, true}) {
    CAPTURE(inplace);
    nn::ReLU6 relu6(inplace);
    CHECK(relu6.toString() == std::string("nn.ReLU6(inplace=") + (inplace ? "true)" : "false)"));
    checkAgainstTorch(kind, relu6, inplace, nn::test::kTorchReLU6, nn::test::kTorchReLU6GradInput);
    nn::HardTanh same(0.f, 6.f, inplace);
    checkAgainstTorch(kind, same, inplace, nn::test::kTorchReLU6, nn::test::kTorchReLU6GradInput);
  }
}

NN_DEVICE_TEST_CASE("Threshold, HardTanh and ReLU6 gradients agree with finite differences, in place in a network",
                    "[Threshold][HardTanh][ReLU6]") {
  const Tensor x = nn::test::awayFromKinks(7, -3.f, 7.f, {-1.f, 0.f, 0.5f, 2.5f, 6.f});
  nn::Threshold threshold(0.5f, -2.f);
  nn::HardTanh hardTanh(-1.f, 2.5f);
  nn::ReLU6 relu6;
  for (nn::Module* module : {static_cast<nn::Module*>(&threshold), static_cast<nn::Module*>(&hardTanh),
                             static_cast<nn::Module*>(&relu6)}) {
    CAPTURE(module->toString());
    module->to(kind.device());
    CHECK_THAT(nn::test::checkInputGradient(*module, kind.on(x)), nn::test::AgreesWithin(1e-3));
    CHECK(module->parameters().first.empty());
  }
  for (const nn::ModulePtr& inPlace :
       {nn::ModulePtr(std::make_shared<nn::Threshold>(0.5f, -2.f, true)),
        nn::ModulePtr(std::make_shared<nn::HardTanh>(-1.f, 2.5f, true)), nn::ModulePtr(std::make_shared<nn::ReLU6>(true))}) {
    CAPTURE(inPlace->toString());
    CHECK_THAT(nn::test::checkInPlaceInNetwork(kind, inPlace, x), nn::test::AgreesWithin(1e-3));
  }
}

NN_DEVICE_TEST_CASE("Threshold, HardTanh and ReLU6 keep their settings through clone, save and load",
                    "[Threshold][HardTanh][ReLU6]") {
  nn::Threshold threshold(0.5f, -2.f, true);
  checkCopies(kind, threshold);
  nn::HardTanh hardTanh(-1.f, 2.5f);
  checkCopies(kind, hardTanh);
  nn::ReLU6 relu6(true);
  checkCopies(kind, relu6);
  auto loaded = std::dynamic_pointer_cast<nn::Threshold>(nn::test::savedAndLoaded(threshold));
  REQUIRE(loaded);
  CHECK(loaded->options().threshold == 0.5f);
  CHECK(loaded->options().value == -2.f);
  CHECK(loaded->inplace());
}

NN_DEVICE_TEST_CASE("Threshold and HardTanh refuse settings they cannot compute with, naming them",
                    "[Threshold][HardTanh]") {
  CHECK_THROWS_WITH(nn::Threshold(0.f, 1.f, true),
                    Catch::Contains("nn.Threshold: in place needs value <= threshold, got value 1 and threshold 0"));
  CHECK_NOTHROW(nn::Threshold(0.f, 1.f, false));
  CHECK_THROWS_WITH(nn::Threshold(INFINITY, 0.f), Catch::Contains("nn.Threshold") && Catch::Contains("finite"));
  CHECK_THROWS_WITH(nn::HardTanh(1.f, 1.f), Catch::Contains("nn.HardTanh: expected finite min < max, got min 1 and max 1"));
  CHECK_THROWS_WITH(nn::HardTanh(std::nanf(""), 1.f), Catch::Contains("nn.HardTanh") && Catch::Contains("nan"));
  nn::HardTanh hardTanh;
  const Tensor x = kind.on(Tensor::zeros({2, 3}));
  hardTanh.forward(x);
  CHECK_THROWS_WITH(hardTanh.backward(x, kind.on(Tensor::zeros({3, 2}))),
                    Catch::Contains("nn.HardTanh(min=-1, max=1, inplace=false)") && Catch::Contains("[2, 3]") &&
                        Catch::Contains("[3, 2]"));
}
