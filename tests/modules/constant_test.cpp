// nn::MulConstant and nn::AddConstant (Torch7's nn.MulConstant, nn.AddConstant): reference
// values by hand and from PyTorch, finite differences, strided input on another device, saving,
// cloning and errors; on CPU devices and, where found, CUDA devices.
#include "nn/modules/MulConstant.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "nn/modules/AddConstant.h"
#include "tests/support/ActivationChecks.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/reference/SliceConstantReference.h"

using nn::Tensor;

namespace {

// The input and gradOutput of tests/reference/make_slice_constant_reference.py: [2, 3, 4].
Tensor formula(double scale, double step, bool cosine) {
  std::vector<float> values(24);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(scale * (cosine ? std::cos(step * double(i)) : std::sin(step * double(i))));
  return Tensor::fromVector({2, 3, 4}, values);
}

// One product or sum per element, rounded once, as PyTorch's: equal to the bit.
void checkAgainstTorch(const nn::test::DeviceKind& kind, nn::Module& module, const std::vector<float>& output,
                       const std::vector<float>& gradInput) {
  const Tensor x = kind.on(formula(5, 0.37, false));
  const Tensor g = kind.on(formula(1, 0.11, true));
  CHECK(module.forward(x).toVector() == output);
  CHECK(module.backward(x, g).toVector() == gradInput);
}

// On another device, with strided input and gradOutput, the host's results; saved and loaded,
// and cloned, the same settings and results.
void checkElsewhereAndCopies(const nn::test::DeviceKind& kind, nn::Module& module) {
  const Tensor host = nn::test::randomTensor({3, 5}, 7);
  const Tensor hostGrad = nn::test::randomTensor({3, 5}, 8);
  const std::vector<float> y = module.forward(host).toVector();
  const std::vector<float> gi = module.backward(host, hostGrad).toVector();
  for (const nn::ModulePtr& copy : {nn::test::savedAndLoaded(module), module.clone()}) {
    CHECK(copy->toString() == module.toString());
    copy->to(kind.compared());
    CHECK(copy->forward(nn::test::stridedOn(host, kind.compared())).toVector() == y);
    CHECK(copy->backward(nn::test::stridedOn(host, kind.compared()), nn::test::stridedOn(hostGrad, kind.compared()))
              .toVector() == gi);
  }
}

}  // namespace

NN_DEVICE_TEST_CASE("MulConstant scales the input and gradOutput by its constant", "[MulConstant]") {
  nn::MulConstant half(-0.5f);
  REQUIRE(half.toString() == "nn.MulConstant(constant=-0.5)");
  const Tensor x = kind.on(Tensor::fromVector({2, 2}, {1, -2, 0.5f, 3}));
  // -0.5 x, each exact: -0.5, 1, -0.25, -1.5.
  REQUIRE(half.forward(x).toVector() == std::vector<float>{-0.5f, 1, -0.25f, -1.5f});
  // gradInput = -0.5 gradOutput.
  REQUIRE(half.backward(x, kind.on(Tensor::fromVector({2, 2}, {4, 2, -6, 0}))).toVector() ==
          std::vector<float>{-2, -1, 3, -0.f});
  REQUIRE(x.toVector() == std::vector<float>{1, -2, 0.5f, 3});  // not in place
  REQUIRE_THAT(nn::test::checkInputGradient(half, kind.on(nn::test::randomTensor({3, 4}, 1))),
               nn::test::AgreesWithin(1e-3));
  nn::MulConstant scale(0.3f);
  checkAgainstTorch(kind, scale, nn::test::kTorchMulConstant, nn::test::kTorchMulConstantGradInput);
  checkElsewhereAndCopies(kind, scale);
}

NN_DEVICE_TEST_CASE("AddConstant shifts the input by its constant and passes gradOutput through", "[AddConstant]") {
  nn::AddConstant shift(1.5f);
  REQUIRE(shift.toString() == "nn.AddConstant(constant=1.5)");
  const Tensor x = kind.on(Tensor::fromVector({2, 2}, {1, -2, 0.5f, 3}));
  // x + 1.5: 2.5, -0.5, 2, 4.5.
  REQUIRE(shift.forward(x).toVector() == std::vector<float>{2.5f, -0.5f, 2, 4.5f});
  const Tensor g = kind.on(Tensor::fromVector({2, 2}, {4, 2, -6, 0}));
  const Tensor& gi = shift.backward(x, g);
  REQUIRE(gi.toVector() == g.toVector());
  REQUIRE(gi.storage() == g.storage());  // shared, as Identity shares it
  REQUIRE_THAT(nn::test::checkInputGradient(shift, kind.on(nn::test::randomTensor({3, 4}, 2))),
               nn::test::AgreesWithin(1e-3));
  nn::AddConstant add(0.7f);
  checkAgainstTorch(kind, add, nn::test::kTorchAddConstant, nn::test::kTorchAddConstantGradInput);
  checkElsewhereAndCopies(kind, add);
}

NN_DEVICE_TEST_CASE("MulConstant and AddConstant refuse constants that are not finite and wrong gradOutputs",
                    "[MulConstant][AddConstant]") {
  const float inf = std::numeric_limits<float>::infinity();
  REQUIRE_THROWS_WITH(nn::MulConstant(inf), Catch::Contains("nn.MulConstant") && Catch::Contains("finite"));
  REQUIRE_THROWS_WITH(nn::AddConstant(std::nanf("")), Catch::Contains("nn.AddConstant") && Catch::Contains("nan"));
  const Tensor x = kind.on(nn::test::randomTensor({2, 3}, 3));
  nn::MulConstant mul(2.f);
  nn::AddConstant add(2.f);
  for (nn::Module* module : {static_cast<nn::Module*>(&mul), static_cast<nn::Module*>(&add)}) {
    module->forward(x);
    REQUIRE_THROWS_WITH(module->backward(x, Tensor::zeros({3, 2}, kind.device())),
                        Catch::Contains(module->typeName()) && Catch::Contains("[2, 3]") && Catch::Contains("[3, 2]"));
    REQUIRE_THROWS_WITH(module->backward(x, Tensor::zeros({2, 3}, kind.other())),
                        Catch::Contains(module->typeName()) && Catch::Contains(kind.other().str()));
  }
}

NN_DEVICE_TEST_CASE("MulConstant and AddConstant in place work on the input and give it back, as Torch7's",
                    "[MulConstant][AddConstant]") {
  // Values that the constants scale and shift exactly, so that the input comes back to the bit.
  const std::vector<float> values{1, -2, 3.5f, 0.25f, 8, -6};
  const std::vector<float> grads{0.5f, 1, -1, 2, 0, -0.75f};
  nn::MulConstant mul(2.f, true);
  nn::AddConstant add(0.5f, true);
  REQUIRE(mul.toString() == "nn.MulConstant(constant=2, inplace)");
  REQUIRE(add.toString() == "nn.AddConstant(constant=0.5, inplace)");
  for (nn::Module* module : {static_cast<nn::Module*>(&mul), static_cast<nn::Module*>(&add)}) {
    INFO(module->toString());
    const bool scales = module == &mul;
    const Tensor x = kind.on(Tensor::fromVector({2, 3}, values));
    const Tensor g = kind.on(Tensor::fromVector({2, 3}, grads));
    const Tensor& y = module->forward(x);
    std::vector<float> expected = values;
    for (float& v : expected) v = scales ? v * 2.f : v + 0.5f;
    CHECK(y.toVector() == expected);
    // The output is the input, changed: no copy.
    CHECK(y.rawData() == x.rawData());
    CHECK(x.toVector() == expected);
    const Tensor& gi = module->backward(x, g);
    expected = grads;
    for (float& v : expected) v = scales ? v * 2.f : v;
    CHECK(gi.toVector() == expected);
    CHECK(gi.rawData() == g.rawData());
    CHECK(x.toVector() == values);
    // A clone and a saved copy keep the flag.
    CHECK(module->clone()->toString() == module->toString());
    CHECK(nn::test::savedAndLoaded(*module)->toString() == module->toString());
  }
  REQUIRE_THROWS_WITH(nn::MulConstant(0.f, true), Catch::Contains("nn.MulConstant") && Catch::Contains("nonzero"));
  const Tensor strided = kind.on(Tensor::zeros({3, 2})).transpose(0, 1);
  REQUIRE_THROWS_WITH(mul.forward(strided), Catch::Contains("nn.MulConstant") && Catch::Contains("contiguous"));
  REQUIRE_THROWS_WITH(add.forward(strided), Catch::Contains("nn.AddConstant") && Catch::Contains("contiguous"));
}
