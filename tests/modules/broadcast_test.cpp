// nn::CMul, nn::Mul and nn::Add (a learned parameter broadcast against the input) and nn::Sum and
// nn::Mean (sums along a dimension): hand-derived values, PyTorch's committed
// (tests/reference/BroadcastReference.h, from tests/reference/make_broadcast_reference.py), finite differences of
// input and parameters, strided input on another device, save/load, clone, errors. On CPU
// devices and, where found, CUDA devices. The reference's values are exact in float and their
// sums exact in double: every device gives PyTorch's to the bit, but a mean's division.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>

#include "nn/modules/Add.h"
#include "nn/modules/CMul.h"
#include "nn/modules/Max.h"
#include "nn/modules/Mul.h"
#include "nn/modules/Sum.h"
#include "nn/tensor/Random.h"
#include "tests/support/ActivationChecks.h"
#include "tests/reference/BroadcastReference.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

// A parameter module's passes over the script's input, gradOutput and parameter against
// PyTorch's: output, gradInput and the parameter's gradient equal to the bit.
void checkAgainstTorch(const nn::test::DeviceKind& kind, nn::Module& module, Tensor& parameter,
                       const std::vector<int64_t>& sizes, const std::vector<float>& output,
                       const std::vector<float>& gradInput, const std::vector<float>& gradParameter) {
  CAPTURE(module.toString());
  module.to(kind.device());
  parameter.copy_(nn::test::exactValues(parameter.sizes(), 3, 7, 3, 4));
  module.zeroGradParameters();
  const Tensor x = kind.on(nn::test::exactValues(sizes, 5, 17, 8, 8));
  const Tensor g = kind.on(nn::test::exactValues(sizes, 7, 13, 6, 4));
  CHECK(module.forward(x).toVector() == output);
  CHECK(module.backward(x, g).toVector() == gradInput);
  CHECK(module.getParameters().second.toVector() == gradParameter);
}

}  // namespace

NN_DEVICE_TEST_CASE("CMul, Mul and Add match hand-computed values", "[CMul][Mul][Add]") {
  // CMul(1, 3, 1, 1): a weight per plane.
  nn::CMul planes(1, 3, 1, 1);
  planes.to(kind.device());
  planes.weight.copy_(Tensor::fromVector({1, 3, 1, 1}, {2, -1, 0.5f}));
  const Tensor x = kind.on(nn::test::counting({1, 3, 1, 2}));
  const Tensor ones = kind.on(Tensor::full({1, 3, 1, 2}, 1.f));
  REQUIRE(planes.forward(x).toVector() == std::vector<float>{2, 4, -3, -4, 2.5f, 3});
  planes.zeroGradParameters();
  REQUIRE(planes.backward(x, ones).toVector() == std::vector<float>{2, 2, -1, -1, 0.5f, 0.5f});
  // The weight's gradient: each plane's sum of x * gradOutput.
  REQUIRE(planes.gradWeight.toVector() == std::vector<float>{3, 7, 11});
  // accGradParameters adds, scaled.
  planes.accGradParameters(x, ones, 0.5f);
  REQUIRE(planes.gradWeight.toVector() == std::vector<float>{4.5f, 10.5f, 16.5f});

  nn::Mul mul;
  mul.to(kind.device());
  mul.weight.fill_(3);
  const Tensor pair = kind.on(nn::test::counting({2}));
  REQUIRE(mul.forward(pair).toVector() == std::vector<float>{3, 6});
  mul.zeroGradParameters();
  REQUIRE(mul.backward(pair, kind.on(Tensor::fromVector({2}, {1, 1}))).toVector() == std::vector<float>{3, 3});
  REQUIRE(mul.gradWeight.toVector() == std::vector<float>{3});

  // Add(2) on [3, 2]: the bias on every row; its gradient the column sums of gradOutput.
  nn::Add add(2);
  add.to(kind.device());
  add.bias.copy_(Tensor::fromVector({2}, {10, 20}));
  const Tensor rows = kind.on(nn::test::counting({3, 2}));
  REQUIRE(add.forward(rows).toVector() == std::vector<float>{11, 22, 13, 24, 15, 26});
  add.zeroGradParameters();
  REQUIRE(add.backward(rows, rows).toVector() == rows.toVector());
  REQUIRE(add.gradBias.toVector() == std::vector<float>{9, 12});
  nn::Add scalar(5, true);
  REQUIRE(scalar.bias.sizes() == std::vector<int64_t>{1});
}

NN_DEVICE_TEST_CASE("CMul, Mul and Add match PyTorch 1.13 to the bit", "[CMul][Mul][Add]") {
  using namespace nn::test;
  nn::CMul planes(1, 3, 1, 1), sample(3, 2, 2), columns(3, 1);
  checkAgainstTorch(kind, planes, planes.weight, {2, 3, 2, 2}, kTorchCMulPlanes, kTorchCMulPlanesGradInput,
                    kTorchCMulPlanesGradParameter);
  checkAgainstTorch(kind, sample, sample.weight, {2, 3, 2, 2}, kTorchCMulSample, kTorchCMulSampleGradInput,
                    kTorchCMulSampleGradParameter);
  checkAgainstTorch(kind, columns, columns.weight, {2, 3, 4}, kTorchCMulColumns, kTorchCMulColumnsGradInput,
                    kTorchCMulColumnsGradParameter);
  nn::Mul mul;
  checkAgainstTorch(kind, mul, mul.weight, {2, 3, 4}, kTorchMul, kTorchMulGradInput, kTorchMulGradParameter);
  nn::Add flat(12), addPlanes(std::vector<int64_t>{1, 3, 1, 1});
  checkAgainstTorch(kind, flat, flat.bias, {2, 3, 2, 2}, kTorchAddFlat, kTorchAddFlatGradInput,
                    kTorchAddFlatGradParameter);
  checkAgainstTorch(kind, addPlanes, addPlanes.bias, {2, 3, 2, 2}, kTorchAddPlanes, kTorchAddPlanesGradInput,
                    kTorchAddPlanesGradParameter);
}

NN_DEVICE_TEST_CASE("CMul, Mul and Add gradients agree with finite differences", "[CMul][Mul][Add]") {
  nn::manualSeed(4);
  nn::CMul planes(1, 3, 1, 1), sample(3, 2, 2);
  nn::Mul mul;
  nn::Add flat(12), addPlanes(std::vector<int64_t>{3, 1, 1});
  for (nn::Module* module : std::initializer_list<nn::Module*>{&planes, &sample, &mul, &flat, &addPlanes}) {
    CAPTURE(module->toString());
    module->to(kind.device());
    const Tensor x = kind.on(nn::test::randomTensor({2, 3, 2, 2}, 5));
    REQUIRE_THAT(nn::test::checkInputGradient(*module, x), nn::test::AgreesWithin(1e-3));
    REQUIRE_THAT(nn::test::checkParameterGradients(*module, x), nn::test::EachAgreesWithin(1e-3, 1));
  }
}

NN_DEVICE_TEST_CASE("Sum and Mean match hand-computed values", "[Sum][Mean]") {
  const Tensor x = kind.on(nn::test::counting({2, 3}));
  nn::Sum rows(1), columns(0), last(-1), batched(0, 1);
  nn::Mean mean(1);
  REQUIRE(rows.forward(x).toVector() == std::vector<float>{6, 15});
  REQUIRE(rows.output.sizes() == std::vector<int64_t>{2});
  REQUIRE(columns.forward(x).toVector() == std::vector<float>{5, 7, 9});
  REQUIRE(last.forward(x).toVector() == std::vector<float>{6, 15});
  // nInputDims 1: a 2-D input is a batch, and dimension 0 is its second.
  REQUIRE(batched.forward(x).toVector() == std::vector<float>{6, 15});
  REQUIRE(mean.forward(x).toVector() == std::vector<float>{2, 5});
  // From options, as nn::load makes it, a Mean averages though SumOptions' sizeAverage is false.
  REQUIRE(nn::Mean(nn::SumOptions{1}).forward(x).toVector() == std::vector<float>{2, 5});
  // gradOutput repeated along the dimension, over its size for the mean.
  const Tensor g = kind.on(Tensor::fromVector({2}, {1, 2}));
  REQUIRE(rows.backward(x, g).toVector() == std::vector<float>{1, 1, 1, 2, 2, 2});
  nn::test::checkWithinUlps(mean.backward(x, g).toVector(), {1.f / 3, 1.f / 3, 1.f / 3, 2.f / 3, 2.f / 3, 2.f / 3}, 1);
  // Kept dimension without squeeze; a 1-D input keeps one element.
  nn::Sum kept(0, -1, false, false), vector(0);
  REQUIRE(kept.forward(x).sizes() == std::vector<int64_t>{1, 3});
  REQUIRE(vector.forward(kind.on(nn::test::counting({3}))).toVector() == std::vector<float>{6});
  REQUIRE(vector.output.sizes() == std::vector<int64_t>{1});
}

NN_DEVICE_TEST_CASE("Sum and Mean match PyTorch 1.13", "[Sum][Mean]") {
  using namespace nn::test;
  nn::Sum sum(1), kept(0, -1, false, false);
  nn::Mean mean(-1);
  nn::test::checkExactPasses(kind, sum, {2, 3, 4}, kTorchSum1, kTorchSum1GradInput, 0);
  nn::test::checkExactPasses(kind, kept, {2, 3, 4}, kTorchSumKept, kTorchSumKeptGradInput, 0);
  nn::test::checkExactPasses(kind, mean, {2, 3, 4}, kTorchMeanLast, kTorchMeanLastGradInput, 1);
}

NN_DEVICE_TEST_CASE("Max takes the first of equal maxima, and NaN where a line holds one", "[Max]") {
  const Tensor x = kind.on(Tensor::fromVector({2, 4}, {1, 5, 5, 2, 3, NAN, 7, NAN}));
  nn::Max max(1);
  const std::vector<float> y = max.forward(x).toVector();
  REQUIRE(y.size() == 2);
  REQUIRE(y[0] == 5);
  REQUIRE(std::isnan(y[1]));
  REQUIRE(max.indices.toVector() == std::vector<float>{1, 1});
  // gradOutput to the chosen elements, 0 elsewhere.
  REQUIRE(max.backward(x, kind.on(Tensor::fromVector({2}, {10, 20}))).toVector() ==
          std::vector<float>{0, 10, 0, 0, 0, 20, 0, 0});
  // Along dimension 0, and with a batch dimension before it (nInputDims 1).
  nn::Max columns(0), batched(0, 1);
  const Tensor m = kind.on(nn::test::counting({2, 3}));
  REQUIRE(columns.forward(m).toVector() == std::vector<float>{4, 5, 6});
  REQUIRE(batched.forward(m).toVector() == std::vector<float>{3, 6});
  REQUIRE(columns.toString() == "nn.Max(dim=0, nInputDims=-1)");
}

NN_DEVICE_TEST_CASE("Max matches PyTorch 1.13 to the bit, ties included", "[Max]") {
  using namespace nn::test;
  nn::Max middle(1), last(-1);
  nn::test::checkExactPasses(kind, middle, {2, 3, 4}, kTorchMax1, kTorchMax1GradInput, 0);
  nn::test::checkExactPasses(kind, last, {3, 4, 5}, kTorchMaxLast, kTorchMaxLastGradInput, 0);
}

NN_DEVICE_TEST_CASE("Max's gradient agrees with finite differences, on another device for strided input too",
                    "[Max]") {
  nn::Max max(1);
  // Each line of dimension 1 a permutation of 20 values 0.1 apart: no ties, and a step of 1e-2
  // does not change the winner.
  std::vector<float> values(240);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 20; ++j)
      for (int k = 0; k < 4; ++k) values[(i * 20 + j) * 4 + k] = 0.1f * static_cast<float>((7 * j + 3 * i + 5 * k) % 20) - 1;
  const Tensor host = Tensor::fromVector({3, 20, 4}, values);
  REQUIRE_THAT(nn::test::checkInputGradient(max, kind.on(host)), nn::test::AgreesWithin(1e-3));
  nn::Max reference(1), tested(1);
  const std::vector<float> y = reference.forward(host).toVector();
  const Tensor g = nn::test::randomTensor({3, 4}, 29);
  const std::vector<float> gi = reference.backward(host, g).toVector();
  tested.to(kind.compared());
  const Tensor strided = nn::test::stridedOn(host, kind.compared());
  REQUIRE(tested.forward(strided).toVector() == y);
  REQUIRE(tested.backward(strided, nn::test::stridedOn(g, kind.compared())).toVector() == gi);
  REQUIRE_THROWS_WITH(nn::Max(1).backward(host, g), Catch::Contains("nn.Max") && Catch::Contains("forward"));
}

NN_DEVICE_TEST_CASE("Sum and Mean gradients agree with finite differences", "[Sum][Mean]") {
  nn::Sum sum(1);
  nn::Mean mean(0);
  for (nn::Module* module : std::initializer_list<nn::Module*>{&sum, &mean}) {
    CAPTURE(module->toString());
    REQUIRE_THAT(nn::test::checkInputGradient(*module, kind.on(nn::test::randomTensor({3, 4, 5}, 6))),
                 nn::test::AgreesWithin(1e-3));
  }
}

NN_DEVICE_TEST_CASE("CMul, Add and Sum on another device give the host's results for strided input",
                    "[CMul][Add][Sum]") {
  const Tensor host = nn::test::randomTensor({2, 3, 4, 5}, 7);
  const Tensor hostGrad = nn::test::randomTensor({2, 3, 4, 5}, 8);
  nn::manualSeed(9);
  auto cmul = std::make_shared<nn::CMul>(1, 3, 1, 5);
  auto add = std::make_shared<nn::Add>(std::vector<int64_t>{4, 1});
  for (const nn::ModulePtr& reference : std::initializer_list<nn::ModulePtr>{cmul, add}) {
    CAPTURE(reference->toString());
    const nn::ModulePtr tested = reference->clone();
    const Tensor y = reference->forward(host).clone();
    reference->zeroGradParameters();
    const Tensor gi = reference->backward(host, hostGrad).clone();
    tested->to(kind.compared());
    tested->zeroGradParameters();
    const Tensor strided = nn::test::stridedOn(host, kind.compared());
    REQUIRE_FALSE(strided.isContiguous());
    REQUIRE(tested->forward(strided).toVector() == y.toVector());
    REQUIRE(tested->backward(strided, nn::test::stridedOn(hostGrad, kind.compared())).toVector() == gi.toVector());
    REQUIRE(tested->getParameters().second.toVector() == reference->getParameters().second.toVector());
  }
  nn::Sum reference(2), tested(2);
  const Tensor sum = reference.forward(host).clone();
  tested.to(kind.compared());
  REQUIRE(tested.forward(nn::test::stridedOn(host, kind.compared())).toVector() == sum.toVector());
}

NN_DEVICE_TEST_CASE("CMul, Mul, Add, Sum and Mean save, load and clone", "[CMul][Mul][Add][Sum][Mean]") {
  nn::manualSeed(10);
  const Tensor x = kind.on(nn::test::randomTensor({2, 3, 4}, 11));
  nn::CMul cmul(3, 1);
  REQUIRE(cmul.toString() == "nn.CMul(sizes=[3, 1])");
  nn::Mul mul;
  REQUIRE(mul.toString() == "nn.Mul");
  nn::Add add(4);
  REQUIRE(add.toString() == "nn.Add(sizes=[4])");
  nn::Sum sum(1);
  nn::Mean mean(2);
  nn::Max max(0);
  REQUIRE(mean.typeName() == "nn.Mean");
  for (nn::Module* module : std::initializer_list<nn::Module*>{&cmul, &mul, &add, &sum, &mean, &max}) {
    CAPTURE(module->toString());
    nn::test::checkCopies(kind, *module, x);
  }
}

NN_DEVICE_TEST_CASE("CMul, Add and Sum reject bad sizes and inputs, naming themselves", "[CMul][Add][Sum]") {
  const nn::Device device = kind.device();
  REQUIRE_THROWS_WITH(nn::CMul(std::vector<int64_t>{3, 0}), Catch::Contains("nn.CMul") && Catch::Contains("[3, 0]"));
  REQUIRE_THROWS_WITH(nn::Add(std::vector<int64_t>{}), Catch::Contains("nn.Add") && Catch::Contains("[]"));
  nn::CMul cmul(3, 1);
  cmul.to(device);
  REQUIRE_THROWS_WITH(cmul.forward(Tensor::zeros({2, 4, 5}, device)),
                      Catch::Contains("nn.CMul") && Catch::Contains("[3, 1]") && Catch::Contains("[2, 4, 5]"));
  REQUIRE_THROWS_WITH(cmul.forward(Tensor::zeros({3, 5}, kind.other())),
                      Catch::Contains("nn.CMul") && Catch::Contains(kind.other().str()));
  const Tensor x = Tensor::zeros({2, 3, 5}, device);
  cmul.forward(x);
  REQUIRE_THROWS_WITH(cmul.backward(x, Tensor::zeros({2, 3, 4}, device)),
                      Catch::Contains("nn.CMul") && Catch::Contains("[2, 3, 4]"));
  nn::Add add(7);
  add.to(device);
  REQUIRE_THROWS_WITH(add.forward(Tensor::zeros({2, 6}, device)),
                      Catch::Contains("nn.Add") && Catch::Contains("[7]") && Catch::Contains("[2, 6]"));
  nn::Sum sum(3);
  REQUIRE_THROWS_WITH(sum.forward(Tensor::zeros({2, 3}, device)),
                      Catch::Contains("nn.Sum") && Catch::Contains("dimension 3") && Catch::Contains("[2, 3]"));
  nn::Sum rows(1);
  const Tensor y = Tensor::zeros({2, 3}, device);
  REQUIRE_THROWS_WITH(rows.backward(y, Tensor::zeros({3}, device)),
                      Catch::Contains("nn.Sum") && Catch::Contains("[2]") && Catch::Contains("[3]"));
}
