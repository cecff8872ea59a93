// nn::SpatialAdaptiveAveragePooling and nn::SpatialUpSamplingNearest (Torch7's): hand-derived
// values with overlapping windows and repeated cells, PyTorch's committed
// (tests/reference/ResamplingReference.h, from tests/reference/make_resampling_reference.py), finite differences,
// strided input on another device, save/load, clone, errors. On CPU devices and, where found,
// CUDA devices: float sums in one order (PyTorch's) on every device.
#include <catch2/catch.hpp>

#include "nn/modules/SpatialAdaptiveAveragePooling.h"
#include "nn/modules/SpatialUpSamplingNearest.h"
#include "tests/support/ActivationChecks.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/reference/ResamplingReference.h"

using nn::Tensor;

NN_DEVICE_TEST_CASE("SpatialAdaptiveAveragePooling averages windows that overlap where the sizes do not divide",
                    "[SpatialAdaptiveAveragePooling]") {
  // A 3x5 plane of 1..15 to 2x3: rows [0, 2) and [1, 3); columns [0, 2), [1, 4), [3, 5).
  nn::SpatialAdaptiveAveragePooling pool(3, 2);
  const Tensor x = kind.on(nn::test::counting({1, 3, 5}));
  REQUIRE(pool.forward(x).sizes() == std::vector<int64_t>{1, 2, 3});
  REQUIRE(pool.output.toVector() == std::vector<float>{4, 5.5f, 7, 9, 10.5f, 12});
  // gradOutput of ones: each cell gets 1 / size of each window holding it. Column windows hold
  // 2, 3 and 2 columns of 2 rows: a column in windows 0 and 1 gets 1/4 + 1/6 = 5/12 per row
  // window, and the middle row is in both row windows.
  const std::vector<float> edge{0.25f, 5.f / 12, 1.f / 6, 5.f / 12, 0.25f};
  const std::vector<float> middle{0.5f, 5.f / 6, 1.f / 3, 5.f / 6, 0.5f};
  std::vector<float> expected = edge;
  expected.insert(expected.end(), middle.begin(), middle.end());
  expected.insert(expected.end(), edge.begin(), edge.end());
  nn::test::checkWithinUlps(pool.backward(x, kind.on(Tensor::full({1, 2, 3}, 1.f))).toVector(), expected, 1);
  // To 1x1: the mean of each plane, batch and planes kept.
  nn::SpatialAdaptiveAveragePooling global(1, 1);
  REQUIRE(global.forward(kind.on(nn::test::counting({2, 2, 2, 2}))).toVector() == std::vector<float>{2.5f, 6.5f, 10.5f, 14.5f});
}

NN_DEVICE_TEST_CASE("SpatialAdaptiveAveragePooling to more cells than the input repeats cells",
                    "[SpatialAdaptiveAveragePooling]") {
  // 1x2 to 2x4: columns [0, 1), [0, 1), [1, 2), [1, 2); rows [0, 1) twice.
  nn::SpatialAdaptiveAveragePooling pool(4, 2);
  const Tensor x = kind.on(Tensor::fromVector({1, 1, 2}, {3, 5}));
  REQUIRE(pool.forward(x).toVector() == std::vector<float>{3, 3, 5, 5, 3, 3, 5, 5});
  REQUIRE(pool.backward(x, kind.on(nn::test::counting({1, 2, 4}))).toVector() == std::vector<float>{1 + 2 + 5 + 6, 3 + 4 + 7 + 8});
}

NN_DEVICE_TEST_CASE("SpatialAdaptiveAveragePooling matches PyTorch 1.13 to the bit", "[SpatialAdaptiveAveragePooling]") {
  using namespace nn::test;
  nn::SpatialAdaptiveAveragePooling to3x4(4, 3), to1x1(1, 1), to7x9(9, 7);
  nn::test::checkExactPasses(kind, to3x4, {2, 2, 5, 7}, kTorchAdaptive3x4, kTorchAdaptive3x4GradInput, 0);
  nn::test::checkExactPasses(kind, to1x1, {2, 2, 5, 7}, kTorchAdaptive1x1, kTorchAdaptive1x1GradInput, 0);
  nn::test::checkExactPasses(kind, to7x9, {2, 2, 5, 7}, kTorchAdaptive7x9, kTorchAdaptive7x9GradInput, 0);
}

NN_DEVICE_TEST_CASE("SpatialUpSamplingNearest copies each cell to a block and sums the block's gradient back",
                    "[SpatialUpSamplingNearest]") {
  nn::SpatialUpSamplingNearest up(2);
  const Tensor x = kind.on(nn::test::counting({1, 2, 2}));
  REQUIRE(up.forward(x).sizes() == std::vector<int64_t>{1, 4, 4});
  REQUIRE(up.output.toVector() == std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  // gradOutput 0..15: cell (0, 0) gets 0 + 1 + 4 + 5, and so on.
  REQUIRE(up.backward(x, kind.on(nn::test::counting({1, 4, 4}, 0))).toVector() == std::vector<float>{10, 18, 42, 50});
  nn::SpatialUpSamplingNearest same(1);
  REQUIRE(same.forward(x).toVector() == x.toVector());
}

NN_DEVICE_TEST_CASE("SpatialUpSamplingNearest matches PyTorch 1.13 to the bit", "[SpatialUpSamplingNearest]") {
  using namespace nn::test;
  nn::SpatialUpSamplingNearest by2(2), by3(3);
  nn::test::checkExactPasses(kind, by2, {1, 2, 3, 4}, kTorchNearest2, kTorchNearest2GradInput, 0);
  nn::test::checkExactPasses(kind, by3, {1, 2, 3, 4}, kTorchNearest3, kTorchNearest3GradInput, 0);
}

NN_DEVICE_TEST_CASE("SpatialAdaptiveAveragePooling and SpatialUpSamplingNearest gradients agree with finite "
                    "differences",
                    "[SpatialAdaptiveAveragePooling][SpatialUpSamplingNearest]") {
  nn::SpatialAdaptiveAveragePooling pool(3, 2), larger(6, 5);
  nn::SpatialUpSamplingNearest up(3);
  for (nn::Module* module : std::initializer_list<nn::Module*>{&pool, &larger, &up}) {
    CAPTURE(module->toString());
    REQUIRE_THAT(nn::test::checkInputGradient(*module, kind.on(nn::test::randomTensor({2, 2, 4, 5}, 9))),
                 nn::test::AgreesWithin(1e-3));
  }
}

NN_DEVICE_TEST_CASE("SpatialAdaptiveAveragePooling and SpatialUpSamplingNearest on another device give the host's "
                    "results for strided input",
                    "[SpatialAdaptiveAveragePooling][SpatialUpSamplingNearest]") {
  const Tensor host = nn::test::randomTensor({2, 3, 5, 7}, 10);
  for (bool adaptive : {true, false}) {
    CAPTURE(adaptive);
    auto make = [&]() -> nn::ModulePtr {
      if (adaptive) return std::make_shared<nn::SpatialAdaptiveAveragePooling>(3, 2);
      return std::make_shared<nn::SpatialUpSamplingNearest>(2);
    };
    const nn::ModulePtr reference = make();
    const Tensor y = reference->forward(host).clone();
    const Tensor hostGrad = nn::test::randomTensor(y.sizes(), 11);
    const Tensor gi = reference->backward(host, hostGrad).clone();
    const nn::ModulePtr module = make();
    module->to(kind.compared());
    const Tensor strided = nn::test::stridedOn(host, kind.compared());
    REQUIRE_FALSE(strided.isContiguous());
    REQUIRE(module->forward(strided).toVector() == y.toVector());
    REQUIRE(module->backward(strided, nn::test::stridedOn(hostGrad, kind.compared())).toVector() == gi.toVector());
  }
}

NN_DEVICE_TEST_CASE("SpatialAdaptiveAveragePooling and SpatialUpSamplingNearest save, load and clone",
                    "[SpatialAdaptiveAveragePooling][SpatialUpSamplingNearest]") {
  nn::SpatialAdaptiveAveragePooling pool(3, 2);
  REQUIRE(pool.toString() == "nn.SpatialAdaptiveAveragePooling(oW=3, oH=2)");
  nn::test::checkCopies(kind, pool, kind.on(nn::test::counting({2, 3, 4, 5})));
  nn::SpatialUpSamplingNearest up(3);
  REQUIRE(up.toString() == "nn.SpatialUpSamplingNearest(scale=3)");
  nn::test::checkCopies(kind, up, kind.on(nn::test::counting({2, 3, 4, 5})));
}

NN_DEVICE_TEST_CASE("SpatialAdaptiveAveragePooling and SpatialUpSamplingNearest reject bad settings and inputs, "
                    "naming themselves",
                    "[SpatialAdaptiveAveragePooling][SpatialUpSamplingNearest]") {
  const nn::Device device = kind.device();
  REQUIRE_THROWS_WITH(nn::SpatialAdaptiveAveragePooling(0, 2),
                      Catch::Contains("nn.SpatialAdaptiveAveragePooling") && Catch::Contains("0x2"));
  REQUIRE_THROWS_WITH(nn::SpatialUpSamplingNearest(0),
                      Catch::Contains("nn.SpatialUpSamplingNearest") && Catch::Contains("got 0"));
  nn::SpatialAdaptiveAveragePooling pool(3, 2);
  nn::SpatialUpSamplingNearest up(2);
  for (nn::Module* module : std::initializer_list<nn::Module*>{&pool, &up}) {
    CAPTURE(module->toString());
    REQUIRE_THROWS_WITH(module->forward(Tensor::zeros({4, 5}, device)),
                        Catch::Contains(module->toString()) && Catch::Contains("[4, 5]"));
    REQUIRE_THROWS_WITH(module->forward(Tensor::zeros({1, 2, 0, 5}, device)),
                        Catch::Contains(module->toString()) && Catch::Contains("[1, 2, 0, 5]"));
    const Tensor x = Tensor::zeros({2, 3, 4}, device);
    const std::vector<int64_t> out = module->forward(x).sizes();
    REQUIRE_THROWS_WITH(module->backward(x, Tensor::zeros({2, 3, 4}, device)),
                        Catch::Contains(module->toString()) && Catch::Contains(nn::shapeString(out)));
    REQUIRE_THROWS_WITH(module->backward(x, Tensor::zeros(out, kind.other())),
                        Catch::Contains(module->toString()) && Catch::Contains(kind.other().str()));
  }
}
