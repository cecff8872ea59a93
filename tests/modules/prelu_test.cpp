// nn::PReLU (Torch7's PReLU(nOutputPlane)): hand-derived values with a slope per plane and one
// shared, on 0 itself; PyTorch's committed (tests/reference/BroadcastReference.h, from
// tests/reference/make_broadcast_reference.py; exact values, so every device meets them to the bit);
// finite differences of input and slopes away from 0; strided input on another device;
// save/load, clone and errors. On CPU devices and, where found, CUDA devices.
#include "nn/modules/PReLU.h"

#include <catch2/catch.hpp>
#include <memory>

#include "tests/support/ActivationChecks.h"
#include "tests/reference/BroadcastReference.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

NN_DEVICE_TEST_CASE("PReLU scales what is not above 0 by its plane's slope", "[PReLU]") {
  nn::PReLU prelu(2);
  REQUIRE(prelu.weight.toVector() == std::vector<float>{0.25f, 0.25f});
  prelu.to(kind.device());
  prelu.weight.copy_(Tensor::fromVector({2}, {0.25f, 0.5f}));
  // [2, 2]: the planes are the columns.
  const Tensor x = kind.on(Tensor::fromVector({2, 2}, {-2, 3, 4, -1}));
  REQUIRE(prelu.forward(x).toVector() == std::vector<float>{-0.5f, 3, 4, -0.5f});
  prelu.zeroGradParameters();
  const Tensor ones = kind.on(Tensor::full({2, 2}, 1.f));
  REQUIRE(prelu.backward(x, ones).toVector() == std::vector<float>{0.25f, 1, 1, 0.5f});
  // Each slope's gradient: the sum of x times gradOutput where x is not above 0.
  REQUIRE(prelu.gradWeight.toVector() == std::vector<float>{-2, -1});

  // One shared slope; at 0 the slope's side: output 0, gradient the slope.
  nn::PReLU shared;
  shared.to(kind.device());
  const Tensor v = kind.on(Tensor::fromVector({3}, {-4, 0, 2}));
  REQUIRE(shared.forward(v).toVector() == std::vector<float>{-1, 0, 2});
  shared.zeroGradParameters();
  REQUIRE(shared.backward(v, kind.on(Tensor::full({3}, 1.f))).toVector() == std::vector<float>{0.25f, 0.25f, 1});
  REQUIRE(shared.gradWeight.toVector() == std::vector<float>{-4});
}

NN_DEVICE_TEST_CASE("PReLU matches PyTorch 1.13 to the bit", "[PReLU]") {
  using namespace nn::test;
  nn::PReLU planes(3), shared;
  const auto check = [&](nn::PReLU& prelu, const std::vector<int64_t>& sizes, const std::vector<float>& output,
                         const std::vector<float>& gradInput, const std::vector<float>& gradWeight) {
    CAPTURE(prelu.toString());
    prelu.to(kind.device());
    prelu.weight.copy_(nn::test::exactValues(prelu.weight.sizes(), 3, 7, 3, 4));
    prelu.zeroGradParameters();
    const Tensor x = kind.on(nn::test::exactValues(sizes, 5, 17, 8, 8));
    CHECK(prelu.forward(x).toVector() == output);
    CHECK(prelu.backward(x, kind.on(nn::test::exactValues(sizes, 7, 13, 6, 4))).toVector() == gradInput);
    CHECK(prelu.gradWeight.toVector() == gradWeight);
  };
  check(planes, {2, 3, 2, 2}, kTorchPReLUPlanes, kTorchPReLUPlanesGradInput, kTorchPReLUPlanesGradParameter);
  check(shared, {2, 3, 4}, kTorchPReLUShared, kTorchPReLUSharedGradInput, kTorchPReLUSharedGradParameter);
}

NN_DEVICE_TEST_CASE("PReLU gradients agree with finite differences away from 0", "[PReLU]") {
  nn::PReLU planes(11), shared;
  for (nn::PReLU* prelu : {&planes, &shared}) {
    CAPTURE(prelu->toString());
    prelu->to(kind.device());
    prelu->weight.copy_(nn::test::randomTensor(prelu->weight.sizes(), 19, 0.1f, 0.9f));
    const Tensor x = kind.on(nn::test::awayFromZero(20, -2, 2));
    REQUIRE_THAT(nn::test::checkInputGradient(*prelu, x), nn::test::AgreesWithin(1e-3));
    REQUIRE_THAT(nn::test::checkParameterGradients(*prelu, x), nn::test::EachAgreesWithin(1e-3, 1));
  }
}

NN_DEVICE_TEST_CASE("PReLU on another device gives the host's results for strided input", "[PReLU]") {
  const Tensor host = nn::test::randomTensor({2, 3, 4, 5}, 21);
  const Tensor hostGrad = nn::test::randomTensor({2, 3, 4, 5}, 22);
  nn::PReLU reference(3);
  reference.weight.copy_(Tensor::fromVector({3}, {0.1f, -0.3f, 0.7f}));
  const nn::ModulePtr tested = reference.clone();
  const std::vector<float> y = reference.forward(host).toVector();
  reference.zeroGradParameters();
  const std::vector<float> gi = reference.backward(host, hostGrad).toVector();
  tested->to(kind.compared());
  tested->zeroGradParameters();
  const Tensor strided = nn::test::stridedOn(host, kind.compared());
  REQUIRE_FALSE(strided.isContiguous());
  REQUIRE(tested->forward(strided).toVector() == y);
  REQUIRE(tested->backward(strided, nn::test::stridedOn(hostGrad, kind.compared())).toVector() == gi);
  REQUIRE(tested->getParameters().second.toVector() == reference.gradWeight.toVector());
}

NN_DEVICE_TEST_CASE("PReLU saves, loads and clones with its slopes", "[PReLU]") {
  nn::PReLU prelu(3);
  REQUIRE(prelu.toString() == "nn.PReLU(nOutputPlane=3)");
  prelu.to(kind.device());
  prelu.weight.copy_(Tensor::fromVector({3}, {0.1f, -0.3f, 0.7f}));
  const Tensor x = kind.on(nn::test::randomTensor({2, 3, 4}, 23));
  const std::vector<float> y = prelu.forward(x).toVector();
  for (const nn::ModulePtr& copy : {nn::test::savedAndLoaded(prelu), prelu.clone()}) {
    CHECK(copy->toString() == prelu.toString());
    copy->to(kind.device());
    CHECK(copy->forward(x).toVector() == y);
  }
}

NN_DEVICE_TEST_CASE("PReLU rejects a negative plane count and inputs of other planes, naming itself", "[PReLU]") {
  REQUIRE_THROWS_WITH(nn::PReLU(-1), Catch::Contains("nn.PReLU") && Catch::Contains("-1"));
  nn::PReLU prelu(3);
  prelu.to(kind.device());
  REQUIRE_THROWS_WITH(prelu.forward(Tensor::zeros({2, 4, 5}, kind.device())),
                      Catch::Contains("nn.PReLU") && Catch::Contains("3 planes") && Catch::Contains("[2, 4, 5]"));
  REQUIRE_THROWS_WITH(prelu.forward(Tensor::zeros({2, 3}, kind.other())),
                      Catch::Contains("nn.PReLU") && Catch::Contains(kind.other().str()));
  const Tensor x = Tensor::zeros({2, 3}, kind.device());
  prelu.forward(x);
  REQUIRE_THROWS_WITH(prelu.backward(x, Tensor::zeros({3, 2}, kind.device())),
                      Catch::Contains("nn.PReLU") && Catch::Contains("[3, 2]"));
}
