// nn::SoftSign and nn::LogSigmoid, the two activations added last: each is a formula in
// nn/math/Activation.h listed in All, a module and this test, nothing more (the kernel tables
// are built from All). Reference values by hand, finite differences, inputs far from 0 (where a
// naive log(1 + e^-x) overflows), errors naming the module, the host's floats on another device,
// and copies.
//
// LogSigmoid's forward and backward call expf and log1pf: the host's within 1 ulp, CUDA's within
// 2; for results below 2 in size that is well inside the 1e-6 the hand values allow.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "nn/modules/LogSigmoid.h"
#include "nn/modules/SoftSign.h"
#include "tests/support/ActivationChecks.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

NN_DEVICE_TEST_CASE("SoftSign matches hand-computed values and differentiates through its input", "[SoftSign]") {
  nn::SoftSign softSign;
  REQUIRE(softSign.toString() == "nn.SoftSign");
  // x / (1 + |x|): 0, 1 / 2, -3 / 4, 7 / 8; the gradient g / (1 + |x|)^2: 2, 1 / 4, -1 / 16, 0.5 / 64.
  const Tensor x = kind.on(Tensor::fromVector({4}, {0.f, 1.f, -3.f, 7.f}));
  const Tensor g = kind.on(Tensor::fromVector({4}, {2.f, 1.f, -1.f, 0.5f}));
  REQUIRE(softSign.forward(x).toVector() == std::vector<float>{0.f, 0.5f, -0.75f, 0.875f});
  REQUIRE(softSign.backward(x, g).toVector() == std::vector<float>{2.f, 0.25f, -0.0625f, 0.0078125f});
  // It reads the input, not the output: another input of the same size gives another gradient.
  REQUIRE(softSign.updateGradInput(Tensor::zeros({4}, kind.device()), g).toVector() ==
          std::vector<float>{2.f, 1.f, -1.f, 0.5f});
}

NN_DEVICE_TEST_CASE("LogSigmoid matches hand-computed values and stays finite far from 0", "[LogSigmoid]") {
  nn::LogSigmoid logSigmoid;
  REQUIRE(logSigmoid.toString() == "nn.LogSigmoid");
  // log(1 / (1 + e^-x)): at 0, -ln 2; at ln 3, ln(3 / 4); at -ln 4, ln(1 / 5). The gradient
  // g (1 - sigmoid(x)): 2 / 2, 1 / 4, -1 (4 / 5).
  const Tensor x = kind.on(Tensor::fromVector({3}, {0.f, std::log(3.f), -std::log(4.f)}));
  const Tensor g = kind.on(Tensor::fromVector({3}, {2.f, 1.f, -1.f}));
  REQUIRE(nn::test::maxAbsDiff(logSigmoid.forward(x), {-std::log(2.f), std::log(0.75f), std::log(0.2f)}) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(logSigmoid.backward(x, g), {1.f, 0.25f, -0.8f}) < 1e-6);
  // Far from 0: at -100, x itself (e^100 overflows a float: log(1 + e^100) would be infinite),
  // with gradient 1; at 100, -e^-100, a float of about 0, with gradient about 0.
  const Tensor far = kind.on(Tensor::fromVector({2}, {-100.f, 100.f}));
  const std::vector<float> y = logSigmoid.forward(far).toVector();
  REQUIRE(y[0] == -100.f);
  REQUIRE(y[1] <= 0.f);
  REQUIRE(y[1] > -1e-30f);
  const std::vector<float> gi = logSigmoid.backward(far, kind.on(Tensor::fromVector({2}, {1.f, 1.f}))).toVector();
  REQUIRE(gi[0] == 1.f);
  REQUIRE(gi[1] >= 0.f);
  REQUIRE(gi[1] < 1e-30f);
}

NN_DEVICE_TEST_CASE("SoftSign and LogSigmoid gradients agree with finite differences", "[SoftSign][LogSigmoid]") {
  const Tensor x = kind.on(nn::test::awayFromZero(41, -4, 4));  // SoftSign's |x| has a kink at 0
  nn::SoftSign softSign;
  nn::LogSigmoid logSigmoid;
  REQUIRE_THAT(nn::test::checkInputGradient(softSign, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkInputGradient(logSigmoid, x), nn::test::AgreesWithin(1e-3));
  REQUIRE(softSign.parameters().first.empty());
  REQUIRE(logSigmoid.parameters().first.empty());
}

NN_DEVICE_TEST_CASE("SoftSign and LogSigmoid reject a gradOutput of the wrong size, naming themselves",
                    "[SoftSign][LogSigmoid]") {
  nn::SoftSign softSign;
  nn::LogSigmoid logSigmoid;
  const Tensor x = Tensor::zeros({2, 3}, kind.device());
  softSign.forward(x);
  logSigmoid.forward(x);
  REQUIRE_THROWS_WITH(softSign.backward(x, Tensor::zeros({3, 2}, kind.device())),
                      Catch::Contains("nn.SoftSign") && Catch::Contains("[2, 3]") && Catch::Contains("[3, 2]"));
  REQUIRE_THROWS_WITH(logSigmoid.backward(x, Tensor::zeros({6}, kind.device())),
                      Catch::Contains("nn.LogSigmoid") && Catch::Contains("[2, 3]") && Catch::Contains("[6]"));
}

NN_DEVICE_TEST_CASE("SoftSign and LogSigmoid on another device give the host modules' floats, and keep in copies",
                    "[SoftSign][LogSigmoid]") {
  // More elements than one grid of CUDA blocks covers, and a strided input. On cpu:1 the same
  // loops as on cpu:0: the same bits; CUDA's expf and log1pf are within 2 ulp: 1e-6.
  const Tensor x = nn::test::randomTensor({(int64_t{1} << 21) + 7}, 43, -6, 6);
  const Tensor g = nn::test::randomTensor({(int64_t{1} << 21) + 7}, 44);
  std::vector<std::pair<nn::ModulePtr, nn::ModulePtr>> pairs{
      {std::make_shared<nn::SoftSign>(), std::make_shared<nn::SoftSign>()},
      {std::make_shared<nn::LogSigmoid>(), std::make_shared<nn::LogSigmoid>()}};
  for (auto& [reference, tested] : pairs) {
    CAPTURE(reference->toString());
    const Tensor y = reference->forward(x).clone();
    const Tensor gi = reference->backward(x, g).clone();
    const Tensor xOn = x.to(kind.compared()), gOn = g.to(kind.compared());
    REQUIRE(nn::test::maxAbsDiff(tested->forward(xOn), y) <= kind.tolerance(1e-6));
    REQUIRE(nn::test::maxAbsDiff(tested->backward(xOn, gOn), gi) <= kind.tolerance(1e-6));
    const Tensor strided = nn::test::stridedOn(x.narrow(0, 0, 1000), kind.compared());
    REQUIRE_FALSE(strided.isContiguous());
    REQUIRE(nn::test::maxAbsDiff(tested->forward(strided), y.narrow(0, 0, 1000)) <= kind.tolerance(1e-6));
    nn::test::checkCopies(kind, *reference, kind.on(nn::test::randomTensor({3, 5}, 45)));
    REQUIRE(nn::test::savedAndLoaded(*reference)->typeName() == reference->typeName());
  }
}
