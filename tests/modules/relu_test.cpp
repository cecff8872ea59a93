// nn::ReLU, out of place and in place (Torch7's nn.ReLU(true)): reference values, finite
// differences, the in-place contract and errors on every device type, and the module on
// another device compared with the one on the host.
#include "nn/modules/ReLU.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>

#include "nn/modules/BatchNormalization.h"
#include "nn/modules/Linear.h"
#include "nn/modules/Sequential.h"
#include "nn/modules/Tanh.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

// Values at least 0.05 away from the kink at 0, where central differences with step 1e-2
// are exact for a piecewise-linear function.
Tensor awayFromKink() {
  Tensor x = nn::test::randomTensor({2, 3, 5}, 11, -1, 1);
  for (int64_t i = 0; i < x.numel(); ++i) {
    float& v = x.data()[i];
    if (v > -0.05f && v < 0.05f) v = v < 0 ? v - 0.05f : v + 0.05f;
  }
  return x;
}

}  // namespace

NN_DEVICE_TEST_CASE("ReLU matches hand-computed values, in place or not", "[ReLU]") {
  for (bool inplace : {false, true}) {
    CAPTURE(inplace);
    nn::ReLU relu(inplace);
    // max(0, x): the negatives and 0 become 0, the positives stay.
    Tensor x = kind.on(Tensor::fromVector({4}, {-1.5f, 0.f, 2.f, 0.25f}));
    REQUIRE(nn::test::maxAbsDiff(relu.forward(x), {0.f, 0.f, 2.f, 0.25f}) == 0);
    // gradInput = gradOutput where x > 0, else 0 (at 0 too, as Torch7's threshold 0).
    Tensor g = kind.on(Tensor::fromVector({4}, {1.f, 2.f, 3.f, 4.f}));
    REQUIRE(nn::test::maxAbsDiff(relu.backward(x, g), {0.f, 0.f, 3.f, 4.f}) == 0);
  }
}

NN_DEVICE_TEST_CASE("ReLU in place overwrites its input and its gradOutput, and shares them", "[ReLU]") {
  nn::ReLU relu(true);
  Tensor x = kind.on(Tensor::fromVector({3}, {-1.f, 3.f, -2.f}));
  const Tensor& y = relu.forward(x);
  REQUIRE(y.storage() == x.storage());
  REQUIRE(nn::test::maxAbsDiff(x, {0.f, 3.f, 0.f}) == 0);
  Tensor g = kind.on(Tensor::fromVector({3}, {5.f, 6.f, 7.f}));
  const Tensor& gi = relu.backward(x, g);
  REQUIRE(gi.storage() == g.storage());
  REQUIRE(nn::test::maxAbsDiff(g, {0.f, 6.f, 0.f}) == 0);
  // Out of place, both stay as they were.
  nn::ReLU copy;
  Tensor a = kind.on(Tensor::fromVector({2}, {-1.f, 1.f}));
  Tensor b = kind.on(Tensor::fromVector({2}, {2.f, 2.f}));
  copy.forward(a);
  copy.backward(a, b);
  REQUIRE(nn::test::maxAbsDiff(a, {-1.f, 1.f}) == 0);
  REQUIRE(nn::test::maxAbsDiff(b, {2.f, 2.f}) == 0);
}

NN_DEVICE_TEST_CASE("ReLU gradients agree with finite differences, in place or not", "[ReLU]") {
  nn::ReLU relu;
  const Tensor x = kind.on(awayFromKink());
  REQUIRE_THAT(nn::test::checkInputGradient(relu, x), nn::test::AgreesWithin(1e-3));
  REQUIRE(relu.parameters().first.empty());
  // In place inside a network, as it is used: Tanh before it keeps the checker's input
  // intact, Tanh after it owns the gradOutput the ReLU overwrites. Same numbers either way.
  auto net = [&](bool inplace) {
    auto s = std::make_shared<nn::Sequential>();
    s->add(std::make_shared<nn::Tanh>()).add(std::make_shared<nn::ReLU>(inplace)).add(std::make_shared<nn::Tanh>());
    s->to(kind.device());
    return s;
  };
  auto plain = net(false), inplace = net(true);
  REQUIRE_THAT(nn::test::checkInputGradient(*inplace, x), nn::test::AgreesWithin(1e-3));
  const Tensor g = kind.on(nn::test::randomTensor(x.sizes(), 3));
  REQUIRE(nn::test::maxAbsDiff(inplace->forward(x), plain->forward(x)) == 0);
  REQUIRE(nn::test::maxAbsDiff(inplace->backward(x, g), plain->backward(x, g)) == 0);
}

NN_DEVICE_TEST_CASE("ReLU keeps NaN and passes its gradient, as PyTorch's relu; -0 and +0 give +0, in place or not",
                    "[ReLU]") {
  for (bool inplace : {false, true}) {
    CAPTURE(inplace);
    nn::ReLU relu(inplace);
    // PyTorch: relu(x) = x <= 0 ? 0 : x, and its backward x <= 0 ? 0 : g (threshold_backward):
    // NaN is not <= 0, so it stays and its gradient passes; -0 <= 0, so it gives +0 and no gradient.
    Tensor x = kind.on(Tensor::fromVector({5}, {std::nanf(""), -0.f, 0.f, -1.f, 2.f}));
    Tensor g = kind.on(Tensor::fromVector({5}, {1.f, 2.f, 3.f, 4.f, 5.f}));
    const std::vector<float> y = relu.forward(x).toVector();
    CHECK(std::isnan(y[0]));
    CHECK_FALSE(std::signbit(y[1]));
    CHECK(std::vector<float>(y.begin() + 1, y.end()) == std::vector<float>{0.f, 0.f, 0.f, 2.f});
    CHECK(relu.backward(x, g).toVector() == std::vector<float>{1.f, 0.f, 0.f, 0.f, 5.f});
  }
  // A NaN weight reaches the output through ReLU (a NaN resumed from a checkpoint is not
  // trained over with a finite loss), also where ReLU(true) runs inside the batch normalisation
  // before it.
  auto linear = std::make_shared<nn::Linear>(2, 2);
  linear->weight.fill_(1.f);
  linear->weight.data()[0] = std::nanf("");
  nn::Sequential net{linear, std::make_shared<nn::ReLU>(true)};
  net.to(kind.device());
  const std::vector<float> out = net.forward(kind.on(Tensor::fromVector({1, 2}, {1.f, 1.f}))).toVector();
  CHECK(std::isnan(out[0]));
  CHECK(std::isfinite(out[1]));
  nn::Sequential fused{std::make_shared<nn::BatchNormalization>(2), std::make_shared<nn::ReLU>(true)};
  fused.to(kind.device());
  const std::vector<float> normalised =
      fused.forward(kind.on(Tensor::fromVector({2, 2}, {std::nanf(""), 1.f, 2.f, 3.f}))).toVector();
  CHECK(std::isnan(normalised[0]));
  CHECK(std::isnan(normalised[2]));
  CHECK(normalised[3] > 0.f);
}

TEST_CASE("ReLU in place is kept by clone and shown as Torch7 shows it", "[ReLU]") {
  REQUIRE(nn::ReLU().toString() == "nn.ReLU");
  REQUIRE(nn::ReLU(true).toString() == "nn.ReLU(true)");
  nn::ReLU relu(true);
  auto copy = std::dynamic_pointer_cast<nn::ReLU>(relu.clone());
  REQUIRE(copy);
  REQUIRE(copy->inplace());
  REQUIRE_FALSE(std::dynamic_pointer_cast<nn::ReLU>(nn::ReLU().clone())->inplace());
}

NN_DEVICE_TEST_CASE("ReLU refuses a gradOutput of another size, and in place a strided input", "[ReLU]") {
  for (bool inplace : {false, true}) {
    nn::ReLU relu(inplace);
    Tensor x = Tensor::zeros({2, 3}, kind.device());
    relu.forward(x);
    REQUIRE_THROWS_WITH(relu.backward(x, Tensor::zeros({3, 2}, kind.device())),
                        Catch::Contains("nn.ReLU") && Catch::Contains("[2, 3]") && Catch::Contains("[3, 2]"));
  }
  nn::ReLU relu(true);
  const Tensor strided = Tensor::zeros({3, 2}, kind.device()).transpose(0, 1);
  REQUIRE_THROWS_WITH(relu.forward(strided), Catch::Contains("nn.ReLU(true)") && Catch::Contains("contiguous"));
}

NN_DEVICE_TEST_CASE("ReLU on another device gives the host module's floats, in place or not", "[ReLU]") {
  // Odd sizes: more elements than one grid of CUDA blocks covers (2^20 a pass), and a single
  // element. ReLU is a comparison and a copy: equal bit for bit on every device.
  for (int64_t n : {int64_t{1}, int64_t{1} << 21 | 7}) {
    CAPTURE(n);
    const Tensor x = nn::test::randomTensor({n}, 31, -4, 4);
    const Tensor g = nn::test::randomTensor({n}, 32);
    for (bool inplace : {false, true}) {
      CAPTURE(inplace);
      nn::ReLU reference(inplace), tested(inplace);
      Tensor xHost = x.clone(), gHost = g.clone();
      Tensor xOn = x.to(kind.compared()), gOn = g.to(kind.compared());
      const std::vector<float> y = reference.forward(xHost).toVector();
      const Tensor& yOn = tested.forward(xOn);
      REQUIRE(yOn.device() == kind.compared());
      REQUIRE(yOn.toVector() == y);
      REQUIRE(tested.backward(xOn, gOn).toVector() == reference.backward(xHost, gHost).toVector());
    }
  }
}
