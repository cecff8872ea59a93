// nn::Tanh and nn::Sigmoid: reference values, gradient checks, errors and a PyTorch
// cross-check on every device type, and the modules on another device compared with those on
// the host.
//
// The forwards call tanhf and expf: the host's are within 1 ulp of the exact value, CUDA's
// within 2 (CUDA C Programming Guide, "Mathematical functions"). For outputs below 1 in size,
// 2 ulp are at most 2^-23 = 1.2e-7, and a backward g (1 - y^2) or g y (1 - y) with |g| <= 2
// carries that error at most 4 times, plus its own roundings: well inside the 1e-6 that the
// reference values allow on every device.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <utility>

#include "nn/modules/Sigmoid.h"
#include "nn/modules/Tanh.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

// The inputs of the PyTorch cross-checks: randomTensor({3, 4}, 21, -3, 3) for x and
// randomTensor({3, 4}, 22) for gradOutput. The expected values were computed in float64 by
// PyTorch 1.13 (torch.tanh / torch.sigmoid, then backward(gradOutput)) on the same numbers,
// regenerated in Python from std::mt19937 as nn::Generator draws them.
Tensor crossCheckInput() { return nn::test::randomTensor({3, 4}, 21, -3, 3); }
Tensor crossCheckGradOutput() { return nn::test::randomTensor({3, 4}, 22); }

}  // namespace

TEST_CASE("the cross-check inputs are the numbers PyTorch was given", "[Tanh][Sigmoid]") {
  REQUIRE(nn::test::maxAbsDiff(crossCheckInput(),
                               {-2.707651f, 1.795631f, -1.265342f, 1.079053f, 1.325798f, -2.783114f, -2.870303f,
                                2.709594f, -1.764464f, 1.186038f, -2.695361f, -2.059115f}) < 1e-6);
}

NN_DEVICE_TEST_CASE("Tanh matches hand-computed values and differentiates through its output", "[Tanh]") {
  nn::Tanh tanh;
  // tanh(x) = (e^2x - 1) / (e^2x + 1): at ln 2, (4 - 1) / (4 + 1) = 0.6; at -ln 3, (1/9 - 1) / (1/9 + 1) = -0.8.
  const Tensor x = kind.on(Tensor::fromVector({3}, {std::log(2.f), 0.f, -std::log(3.f)}));
  REQUIRE(nn::test::maxAbsDiff(tanh.forward(x), {0.6f, 0.f, -0.8f}) < 1e-6);
  // gradInput = g (1 - y^2): 2 (1 - 0.36), 1 (1 - 0), -1 (1 - 0.64).
  const Tensor g = kind.on(Tensor::fromVector({3}, {2, 1, -1}));
  REQUIRE(nn::test::maxAbsDiff(tanh.backward(x, g), {1.28f, 1.f, -0.36f}) < 1e-6);
  // Torch7's backward reads the output only: another input of the same size changes nothing.
  REQUIRE(nn::test::maxAbsDiff(tanh.updateGradInput(Tensor::zeros({3}, kind.device()), g), {1.28f, 1.f, -0.36f}) <
          1e-6);
}

NN_DEVICE_TEST_CASE("Sigmoid matches hand-computed values and differentiates through its output", "[Sigmoid]") {
  nn::Sigmoid sigmoid;
  // 1 / (1 + e^-x): at 0, 1/2; at ln 3, 1 / (1 + 1/3) = 0.75; at -ln 4, 1 / (1 + 4) = 0.2.
  const Tensor x = kind.on(Tensor::fromVector({3}, {0.f, std::log(3.f), -std::log(4.f)}));
  REQUIRE(nn::test::maxAbsDiff(sigmoid.forward(x), {0.5f, 0.75f, 0.2f}) < 1e-6);
  // gradInput = g y (1 - y): 1 * 0.25, 2 * 0.1875, -1 * 0.16.
  const Tensor g = kind.on(Tensor::fromVector({3}, {1, 2, -1}));
  REQUIRE(nn::test::maxAbsDiff(sigmoid.backward(x, g), {0.25f, 0.375f, -0.16f}) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(sigmoid.updateGradInput(Tensor::zeros({3}, kind.device()), g), {0.25f, 0.375f, -0.16f}) <
          1e-6);
}

NN_DEVICE_TEST_CASE("Tanh and Sigmoid gradients agree with finite differences", "[Tanh][Sigmoid]") {
  nn::Tanh tanh;
  nn::Sigmoid sigmoid;
  const Tensor x = kind.on(nn::test::randomTensor({2, 3, 4}, 5, -2, 2));
  REQUIRE_THAT(nn::test::checkInputGradient(tanh, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkInputGradient(sigmoid, x), nn::test::AgreesWithin(1e-3));
  REQUIRE(tanh.parameters().first.empty());
  REQUIRE(sigmoid.parameters().first.empty());
}

NN_DEVICE_TEST_CASE("Tanh and Sigmoid reject a gradOutput of the wrong size, naming themselves", "[Tanh][Sigmoid]") {
  nn::Tanh tanh;
  nn::Sigmoid sigmoid;
  const Tensor x = Tensor::zeros({2, 3}, kind.device());
  tanh.forward(x);
  sigmoid.forward(x);
  REQUIRE_THROWS_WITH(tanh.backward(x, Tensor::zeros({3, 2}, kind.device())),
                      Catch::Contains("nn.Tanh") && Catch::Contains("[2, 3]") && Catch::Contains("[3, 2]"));
  REQUIRE_THROWS_WITH(sigmoid.backward(x, Tensor::zeros({6}, kind.device())),
                      Catch::Contains("nn.Sigmoid") && Catch::Contains("[2, 3]") && Catch::Contains("[6]"));
}

NN_DEVICE_TEST_CASE("Tanh and Sigmoid give the same result for a strided input and its contiguous copy",
                    "[Tanh][Sigmoid]") {
  const Tensor strided = kind.on(nn::test::randomTensor({4, 3}, 6, -2, 2)).transpose(0, 1);
  REQUIRE_FALSE(strided.isContiguous());
  const Tensor copy = strided.contiguous();
  const Tensor g = kind.on(nn::test::randomTensor({3, 4}, 7));
  const Tensor stridedG = g.transpose(0, 1).contiguous().transpose(0, 1);  // g's values, not contiguous
  nn::Tanh a, b;
  nn::Sigmoid c, d;
  REQUIRE(nn::test::maxAbsDiff(a.forward(strided), b.forward(copy)) == 0);
  REQUIRE(nn::test::maxAbsDiff(a.backward(strided, stridedG), b.backward(copy, g)) == 0);
  REQUIRE(nn::test::maxAbsDiff(c.forward(strided), d.forward(copy)) == 0);
  REQUIRE(nn::test::maxAbsDiff(c.backward(strided, g), d.backward(copy, g)) == 0);
}

NN_DEVICE_TEST_CASE("Tanh and Sigmoid clones are independent and compute the same", "[Tanh][Sigmoid]") {
  const Tensor x = kind.on(nn::test::randomTensor({2, 5}, 8));
  const Tensor y = kind.on(nn::test::randomTensor({2, 5}, 9));
  for (nn::ModulePtr m :
       {nn::ModulePtr(std::make_shared<nn::Tanh>()), nn::ModulePtr(std::make_shared<nn::Sigmoid>())}) {
    const std::vector<float> out = m->forward(x).toVector();
    nn::ModulePtr copy = m->clone();
    REQUIRE(copy->typeName() == m->typeName());
    REQUIRE(copy->forward(x).toVector() == out);
    copy->forward(y);
    REQUIRE(m->output.toVector() == out);  // the clone has its own output
  }
}

NN_DEVICE_TEST_CASE("Tanh and Sigmoid match PyTorch on a random input", "[Tanh][Sigmoid]") {
  const Tensor x = kind.on(crossCheckInput());
  const Tensor g = kind.on(crossCheckGradOutput());
  nn::Tanh tanh;
  REQUIRE(nn::test::maxAbsDiff(tanh.forward(x),
                               {-0.9911434f, 0.9463517f, -0.8525302f, 0.7928476f, 0.8682186f, -0.9923794f, -0.9935949f,
                                0.9911776f, -0.9429995f, 0.8293461f, -0.990924f, -0.9679746f}) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(tanh.backward(x, g), {-0.01028245f, 0.04217733f, -0.01000919f, 0.1712169f, -0.03912653f,
                                                     0.004174734f, 0.009172867f, 0.0098387f, -0.07283906f, 0.2164748f,
                                                     -0.005823333f, 0.04957695f}) < 1e-6);
  nn::Sigmoid sigmoid;
  REQUIRE(nn::test::maxAbsDiff(sigmoid.forward(x),
                               {0.06252339f, 0.8576163f, 0.2200556f, 0.7463147f, 0.7901447f, 0.05824352f, 0.05364128f,
                                0.9375904f, 0.1462322f, 0.7660317f, 0.06324767f, 0.1131346f}) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(sigmoid.backward(x, g),
                               {-0.03417672f, 0.04932364f, -0.006288206f, 0.0872832f, -0.02635214f, 0.01508179f,
                                0.03646695f, 0.0327722f, -0.08210987f, 0.1242793f, -0.01909379f, 0.07892569f}) < 1e-6);
}

NN_DEVICE_TEST_CASE("Tanh and Sigmoid on another device give the host modules' floats", "[Tanh][Sigmoid]") {
  // Odd sizes: more elements than one grid of CUDA blocks covers (2^20 a pass), and a single
  // element. On cpu:1 the same loops as on cpu:0: the same bits. tanhf and expf are CUDA's own
  // on the GPU, within 2 ulp; the products after them stay within a few more: 1e-6.
  for (int64_t n : {int64_t{1}, int64_t{1} << 21 | 7}) {
    CAPTURE(n);
    const Tensor x = nn::test::randomTensor({n}, 31, -4, 4);
    const Tensor g = nn::test::randomTensor({n}, 32);
    std::vector<std::pair<nn::ModulePtr, nn::ModulePtr>> pairs{
        {std::make_shared<nn::Tanh>(), std::make_shared<nn::Tanh>()},
        {std::make_shared<nn::Sigmoid>(), std::make_shared<nn::Sigmoid>()}};
    for (auto& [reference, tested] : pairs) {
      CAPTURE(reference->toString());
      const Tensor xOn = x.to(kind.compared()), gOn = g.to(kind.compared());
      const Tensor y = reference->forward(x).clone();
      const Tensor& yOn = tested->forward(xOn);
      REQUIRE(yOn.device() == kind.compared());
      const Tensor gi = reference->backward(x, g).clone();
      REQUIRE(nn::test::maxAbsDiff(yOn, y) <= kind.tolerance(1e-6));
      REQUIRE(nn::test::maxAbsDiff(tested->backward(xOn, gOn), gi) <= kind.tolerance(1e-6));
    }
  }
}
