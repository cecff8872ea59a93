// nn::SpatialDilatedConvolution and nn::SpatialFullConvolution (Torch7's): hand-derived values,
// PyTorch's committed (tests/reference/ConvolutionReference.h, from tests/reference/make_convolution_reference.py;
// exact values whose products and sums are exact, so every device meets them to the bit),
// finite differences of input and parameters, strided input on another device, save/load,
// clone and errors. On CPU devices and, where found, CUDA devices.
#include <catch2/catch.hpp>
#include <memory>

#include "nn/modules/SpatialConvolution.h"
#include "nn/modules/SpatialFullConvolution.h"
#include "nn/tensor/Random.h"
#include "tests/support/ActivationChecks.h"
#include "tests/reference/ConvolutionReference.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

// The module with the script's weight and bias, its passes over the script's input and
// gradOutput: every result equal to PyTorch's.
void checkAgainstTorch(const nn::test::DeviceKind& kind, nn::Module& module, Tensor& weight, Tensor& bias,
                       const std::vector<int64_t>& sizes, const std::vector<float>& output,
                       const std::vector<float>& gradInput, const std::vector<float>& gradWeight,
                       const std::vector<float>& gradBias) {
  CAPTURE(module.toString());
  module.to(kind.device());
  weight.copy_(nn::test::exactValues(weight.sizes(), 3, 7, 3, 4));
  bias.copy_(nn::test::exactValues(bias.sizes(), 2, 5, 2, 2));
  module.zeroGradParameters();
  const Tensor x = kind.on(nn::test::exactValues(sizes, 5, 17, 8, 8));
  const Tensor& y = module.forward(x);
  CHECK(y.toVector() == output);
  const Tensor g = kind.on(nn::test::exactValues(y.sizes(), 7, 13, 6, 4));
  CHECK(module.backward(x, g).toVector() == gradInput);
  const std::vector<Tensor> gradients = module.parameters().second;
  REQUIRE(gradients.size() == 2);
  CHECK(gradients[0].toVector() == gradWeight);
  CHECK(gradients[1].toVector() == gradBias);
}

}  // namespace

NN_DEVICE_TEST_CASE("SpatialDilatedConvolution's taps lie dilation cells apart", "[SpatialDilatedConvolution]") {
  // A 2x2 kernel of ones with dilation 2 on a 5x5 plane of 1..25 sums cells two apart: a 3x3
  // output, (0, 0) = 1 + 3 + 11 + 13.
  nn::SpatialDilatedConvolution conv(1, 1, 2, 2, 1, 1, 0, 0, 2, 2);
  conv.to(kind.device());
  conv.weight.fill_(1);
  conv.bias.fill_(0);
  const Tensor x = kind.on(nn::test::counting({1, 5, 5}));
  REQUIRE(conv.forward(x).sizes() == std::vector<int64_t>{1, 3, 3});
  REQUIRE(conv.output.toVector() == std::vector<float>{28, 32, 36, 48, 52, 56, 68, 72, 76});
  // gradOutput of ones: each cell gets the count of windows whose taps reach it.
  const Tensor ones = kind.on(Tensor::full({1, 3, 3}, 1.f));
  REQUIRE(conv.backward(x, ones).toVector() ==
          std::vector<float>{1, 1, 2, 1, 1, 1, 1, 2, 1, 1, 2, 2, 4, 2, 2, 1, 1, 2, 1, 1, 1, 1, 2, 1, 1});
  REQUIRE(conv.toString() == "nn.SpatialDilatedConvolution(1 -> 1, 2x2, 1,1, 0,0, 2,2)");
  // Without dilation it is SpatialConvolution's.
  nn::SpatialDilatedConvolution plain(1, 1, 2, 2);
  nn::SpatialConvolution reference(1, 1, 2, 2);
  plain.to(kind.device());
  reference.to(kind.device());
  plain.weight.copy_(reference.weight);
  plain.bias.copy_(reference.bias);
  REQUIRE(plain.forward(x).toVector() == reference.forward(x).toVector());
}

NN_DEVICE_TEST_CASE("SpatialFullConvolution spreads each input cell over a kernel-sized block of the output",
                    "[SpatialFullConvolution]") {
  // A 2x2 kernel of ones with stride 2 copies each cell to a 2x2 block; adj 1 adds a last row
  // and column that only the bias reaches.
  nn::SpatialFullConvolution up(1, 1, 2, 2, 2, 2, 0, 0, 1, 1);
  up.to(kind.device());
  up.weight.fill_(1);
  up.bias.fill_(0.5f);
  const Tensor x = kind.on(nn::test::counting({1, 1, 2, 2}));
  REQUIRE(up.forward(x).sizes() == std::vector<int64_t>{1, 1, 5, 5});
  REQUIRE(up.output.toVector() == std::vector<float>{1.5f, 1.5f, 2.5f, 2.5f, 0.5f, 1.5f, 1.5f, 2.5f, 2.5f,
                                                     0.5f, 3.5f, 3.5f, 4.5f, 4.5f, 0.5f, 3.5f, 3.5f, 4.5f,
                                                     4.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f});
  // The input's gradient sums each block of gradOutput; the bias's sums all of it.
  const Tensor g = kind.on(nn::test::counting({1, 1, 5, 5}));
  up.zeroGradParameters();
  REQUIRE(up.backward(x, g).toVector() == std::vector<float>{1 + 2 + 6 + 7, 3 + 4 + 8 + 9, 11 + 12 + 16 + 17,
                                                             13 + 14 + 18 + 19});
  REQUIRE(up.gradBias.toVector() == std::vector<float>{325});
  // The weight's gradient: tap (ky, kx) pairs each input cell with its cell of the block.
  REQUIRE(up.gradWeight.toVector() == std::vector<float>{1 * 1 + 2 * 3 + 3 * 11 + 4 * 13, 1 * 2 + 2 * 4 + 3 * 12 + 4 * 14,
                                                         1 * 6 + 2 * 8 + 3 * 16 + 4 * 18,
                                                         1 * 7 + 2 * 9 + 3 * 17 + 4 * 19});
}

NN_DEVICE_TEST_CASE("SpatialDilatedConvolution and SpatialFullConvolution match PyTorch 1.13 to the bit",
                    "[SpatialDilatedConvolution][SpatialFullConvolution]") {
  using namespace nn::test;
  nn::SpatialDilatedConvolution dilated(3, 4, 2, 3, 1, 2, 2, 1, 3, 2);
  checkAgainstTorch(kind, dilated, dilated.weight, dilated.bias, {2, 3, 7, 8}, kTorchDilated, kTorchDilatedGradInput,
                    kTorchDilatedGradWeight, kTorchDilatedGradBias);
  nn::SpatialFullConvolution full(3, 2, 4, 3, 3, 2, 1, 1, 2, 1);
  checkAgainstTorch(kind, full, full.weight, full.bias, {2, 3, 4, 5}, kTorchFull, kTorchFullGradInput,
                    kTorchFullGradWeight, kTorchFullGradBias);
}

NN_DEVICE_TEST_CASE("SpatialDilatedConvolution and SpatialFullConvolution gradients agree with finite differences",
                    "[SpatialDilatedConvolution][SpatialFullConvolution]") {
  nn::manualSeed(12);
  nn::SpatialDilatedConvolution dilated(2, 3, 3, 2, 2, 1, 1, 2, 2, 3);
  nn::SpatialFullConvolution full(2, 3, 3, 2, 2, 3, 1, 0, 1, 2);
  for (nn::Module* module : std::initializer_list<nn::Module*>{&dilated, &full}) {
    CAPTURE(module->toString());
    module->to(kind.device());
    const Tensor x = kind.on(nn::test::randomTensor({2, 2, 6, 7}, 13));
    REQUIRE_THAT(nn::test::checkInputGradient(*module, x), nn::test::AgreesWithin(1e-3));
    REQUIRE_THAT(nn::test::checkParameterGradients(*module, x), nn::test::EachAgreesWithin(1e-3, 2));
  }
}

NN_DEVICE_TEST_CASE("SpatialDilatedConvolution and SpatialFullConvolution on another device give the host's results "
                    "for strided input",
                    "[SpatialDilatedConvolution][SpatialFullConvolution]") {
  nn::manualSeed(14);
  const Tensor host = nn::test::randomTensor({2, 2, 6, 7}, 15);
  auto dilated = std::make_shared<nn::SpatialDilatedConvolution>(2, 3, 3, 2, 2, 1, 1, 2, 2, 3);
  auto full = std::make_shared<nn::SpatialFullConvolution>(2, 3, 3, 2, 2, 3, 1, 0, 1, 2);
  for (const nn::ModulePtr& reference : std::initializer_list<nn::ModulePtr>{dilated, full}) {
    CAPTURE(reference->toString());
    const nn::ModulePtr tested = reference->clone();
    const Tensor y = reference->forward(host).clone();
    const Tensor hostGrad = nn::test::randomTensor(y.sizes(), 16);
    reference->zeroGradParameters();
    const Tensor gi = reference->backward(host, hostGrad).clone();
    tested->to(kind.compared());
    tested->zeroGradParameters();
    const Tensor strided = nn::test::stridedOn(host, kind.compared());
    REQUIRE_FALSE(strided.isContiguous());
    // Another device, another order of the sums (cuDNN): within float rounding.
    REQUIRE(nn::test::maxAbsDiff(tested->forward(strided), y) <= 1e-5);
    REQUIRE(nn::test::maxAbsDiff(tested->backward(strided, nn::test::stridedOn(hostGrad, kind.compared())), gi) <=
            1e-5);
    REQUIRE(nn::test::maxAbsDiff(tested->getParameters().second, reference->getParameters().second) <= 1e-4);
  }
}

NN_DEVICE_TEST_CASE("SpatialDilatedConvolution and SpatialFullConvolution save, load and clone",
                    "[SpatialDilatedConvolution][SpatialFullConvolution]") {
  nn::manualSeed(17);
  nn::SpatialDilatedConvolution dilated(2, 3, 3, 2, 2, 1, 1, 2, 2, 3);
  nn::SpatialFullConvolution full(2, 3, 3, 2, 2, 3, 1, 0, 1, 2);
  const Tensor x = kind.on(nn::test::randomTensor({2, 2, 6, 7}, 18));
  for (nn::Module* module : std::initializer_list<nn::Module*>{&dilated, &full}) {
    CAPTURE(module->toString());
    nn::test::checkCopies(kind, *module, x);
  }
}

NN_DEVICE_TEST_CASE("SpatialDilatedConvolution and SpatialFullConvolution reject bad settings and inputs, naming "
                    "themselves",
                    "[SpatialDilatedConvolution][SpatialFullConvolution]") {
  const nn::Device device = kind.device();
  REQUIRE_THROWS_WITH(nn::SpatialDilatedConvolution(1, 1, 3, 3, 1, 1, 0, 0, 0, 1),
                      Catch::Contains("nn.SpatialDilatedConvolution") && Catch::Contains("dilation 0,1"));
  REQUIRE_THROWS_WITH(nn::SpatialFullConvolution(1, 1, 3, 3, 2, 2, 0, 0, 2, 0),
                      Catch::Contains("nn.SpatialFullConvolution") && Catch::Contains("2,0"));
  nn::SpatialDilatedConvolution dilated(1, 1, 3, 3, 1, 1, 0, 0, 3, 3);  // spans 7 cells
  dilated.to(device);
  REQUIRE_THROWS_WITH(dilated.forward(Tensor::zeros({1, 6, 9}, device)),
                      Catch::Contains("nn.SpatialDilatedConvolution") && Catch::Contains("at least 7") &&
                          Catch::Contains("[1, 6, 9]"));
  nn::SpatialFullConvolution full(2, 1, 3, 3, 1, 1, 2, 2);  // padding takes 4 of 3 + (H - 1)
  full.to(device);
  REQUIRE_THROWS_WITH(full.forward(Tensor::zeros({2, 1, 5}, device)),
                      Catch::Contains("nn.SpatialFullConvolution") && Catch::Contains("[2, 1, 5]"));
  REQUIRE_THROWS_WITH(full.forward(Tensor::zeros({1, 4, 4}, device)),
                      Catch::Contains("nn.SpatialFullConvolution") && Catch::Contains("[1, 4, 4]"));
  const Tensor x = Tensor::zeros({2, 4, 4}, device);
  full.forward(x);
  REQUIRE_THROWS_WITH(full.backward(x, Tensor::zeros({1, 4, 4}, device)),
                      Catch::Contains("nn.SpatialFullConvolution") && Catch::Contains("[1, 2, 2]"));
}
