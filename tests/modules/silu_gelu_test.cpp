// nn::SiLU and nn::GELU (PyTorch's nn.SiLU and nn.GELU, both forms): reference values by hand and
// from PyTorch (tests/reference/ActivationReference.h, from tests/reference/make_activation_reference.py), finite
// differences, GELU's form through clone, save and load, errors naming the module, the host's
// floats on another device, and copies; on CPU devices and, where found, CUDA devices.
//
// Both call expf, erff or tanhf in each pass: the host's within 1 ulp, CUDA's within 2. Where a
// result is a difference of nearly equal terms (SiLU's gradient at x = -1.28, where
// 1 + x (1 - sigmoid(x)) is 0; GELU below -2, where 1 + erf(x / sqrt 2) is near 0) an ulp of a
// term is many of the result's, so results are compared in absolute terms.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "nn/core/Module.h"
#include "nn/modules/GELU.h"
#include "nn/modules/SiLU.h"
#include "tests/support/ActivationChecks.h"
#include "tests/reference/ActivationReference.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

// The largest |got - want| of two vectors of one size.
double largestDifference(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  double largest = 0;
  for (size_t i = 0; i < got.size(); ++i) largest = std::max(largest, std::fabs(double{got[i]} - want[i]));
  return largest;
}

}  // namespace

NN_DEVICE_TEST_CASE("SiLU matches hand-computed values and differentiates through its input", "[SiLU]") {
  nn::SiLU silu;
  REQUIRE(silu.toString() == "nn.SiLU");
  // x sigmoid(x): at 0, 0; at ln 3, sigmoid = 1 / (1 + 1/3) = 3/4, so (3/4) ln 3; at -ln 3, sigmoid
  // = 1/4, so -(1/4) ln 3. The gradient g s (1 + x (1 - s)): 2 (1/2) (1 + 0) = 1; 1 (3/4) (1 + (1/4) ln 3)
  // = 3/4 + (3/16) ln 3; -1 (1/4) (1 - (3/4) ln 3) = -1/4 + (3/16) ln 3.
  const double ln3 = std::log(3.0);
  const Tensor x = kind.on(Tensor::fromVector({3}, {0.f, static_cast<float>(ln3), static_cast<float>(-ln3)}));
  const Tensor g = kind.on(Tensor::fromVector({3}, {2.f, 1.f, -1.f}));
  REQUIRE(largestDifference(silu.forward(x).toVector(),
                            {0.f, static_cast<float>(0.75 * ln3), static_cast<float>(-0.25 * ln3)}) < 1e-6);
  REQUIRE(largestDifference(silu.backward(x, g).toVector(), {1.f, static_cast<float>(0.75 + 0.1875 * ln3),
                                                             static_cast<float>(-0.25 + 0.1875 * ln3)}) < 1e-6);
  // It reads the input, not the output: at an input of zeros the gradient is g / 2.
  REQUIRE(silu.updateGradInput(Tensor::zeros({3}, kind.device()), g).toVector() ==
          std::vector<float>{1.f, 0.5f, -0.5f});
  // Far below 0, e^-x overflows to infinity and x / infinity is -0, with a gradient of 0; far
  // above, x itself with a gradient of 1.
  const Tensor far = kind.on(Tensor::fromVector({2}, {-100.f, 100.f}));
  const std::vector<float> y = silu.forward(far).toVector();
  REQUIRE(y[0] == 0.f);
  REQUIRE(std::signbit(y[0]));
  REQUIRE(y[1] == 100.f);
  REQUIRE(silu.backward(far, kind.on(Tensor::fromVector({2}, {1.f, 1.f}))).toVector() == std::vector<float>{0.f, 1.f});
}

NN_DEVICE_TEST_CASE("GELU matches hand-computed values in both forms, one within the other's 5e-4", "[GELU]") {
  nn::GELU exact;
  nn::GELU tanh("tanh");
  const Tensor x = kind.on(Tensor::fromVector({3}, {0.f, 1.f, -1.f}));
  const Tensor g = kind.on(Tensor::fromVector({3}, {2.f, 1.f, -1.f}));
  // x Phi(x), with Phi(1) = 0.84134475 from the normal table and Phi(-1) = 1 - Phi(1); at 0, 0. The
  // gradient g (Phi(x) + x phi(x)), phi(1) = phi(-1) = e^(-1/2) / sqrt(2 pi) = 0.24197072: at 0,
  // 2 (1/2) = 1; at 1, 0.84134475 + 0.24197072 = 1.08331547; at -1, -(0.15865525 - 0.24197072).
  REQUIRE(largestDifference(exact.forward(x).toVector(), {0.f, 0.84134475f, -0.15865525f}) < 1e-6);
  REQUIRE(largestDifference(exact.backward(x, g).toVector(), {1.f, 1.08331547f, 0.08331547f}) < 1e-6);
  // In the tail, where 1 + erf(x / sqrt 2) cancels: -3 Phi(-3) = -3 * 0.0013498980 = -0.0040496941
  // (the normal table), within an ulp of erf near 1 (6e-8) times 1.5; CUDA's erff within 2 ulp.
  const float tail = exact.forward(kind.on(Tensor::fromVector({1}, {-3.f}))).toVector()[0];
  REQUIRE(std::fabs(tail - -0.0040496941) <= 1e-8 + kind.tolerance(2e-7));
  // 0.5 x (1 + t), t = tanh(u), u = sqrt(2 / pi) (x + 0.044715 x^3): at 1, u = 0.79788456 * 1.044715 =
  // 0.83356197 and t = 0.68238398, so 0.84119199; at -1, t = -0.68238398 and y = -0.5 (1 - 0.68238398)
  // = -0.15880801. The gradient g (0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2 / pi) (1 + 0.134145 x^2)):
  // at 1, 0.84119199 + 0.5 (1 - 0.46564790) (0.79788456 * 1.134145) = 0.84119199 + 0.24177209 =
  // 1.08296408; at -1, -(0.15880801 - 0.24177209) = 0.08296408; at 0, 2 (1/2) = 1.
  REQUIRE(largestDifference(tanh.forward(x).toVector(), {0.f, 0.84119199f, -0.15880801f}) < 1e-6);
  REQUIRE(largestDifference(tanh.backward(x, g).toVector(), {1.f, 1.08296408f, 0.08296408f}) < 1e-6);
  // The tanh form lies within 4.8e-4 of the exact one everywhere (the largest, at x = -2.70), and
  // is another function: the form the module was made with is the one it computes.
  const Tensor wide = kind.on(nn::test::randomTensor({1000}, 51, -8, 8));
  const double apart = largestDifference(tanh.forward(wide).toVector(), exact.forward(wide).toVector());
  REQUIRE(apart < 5e-4);
  REQUIRE(apart > 1e-4);
}

NN_DEVICE_TEST_CASE("SiLU and GELU match PyTorch's", "[SiLU][GELU]") {
  nn::SiLU silu;
  nn::GELU exact;
  nn::GELU tanh("tanh");
  const struct {
    nn::Module& module;
    const std::vector<float>& output;
    const std::vector<float>& gradInput;
  } cases[] = {{silu, nn::test::kTorchSiLU, nn::test::kTorchSiLUGradInput},
               {exact, nn::test::kTorchGELU, nn::test::kTorchGELUGradInput},
               {tanh, nn::test::kTorchGELUTanh, nn::test::kTorchGELUTanhGradInput}};
  for (const auto& c : cases) {
    CAPTURE(c.module.toString());
    const auto [y, gi] = nn::test::runPasses(kind, c.module, nn::test::kActivationX, nn::test::kActivationGrad, false);
    // Within 1e-6 of PyTorch's, absolutely (see the top; |gradOutput| <= 4). PyTorch's vectorised
    // float erf rounds otherwise in the tail: its GELU(-3) here is -0.00405022502, where
    // -3 Phi(-3) = -0.0040496941 and its loop for a single element gives -0.00404968858, as ours.
    CHECK(largestDifference(y, c.output) <= 1e-6 + kind.tolerance(1e-6));
    CHECK(largestDifference(gi, c.gradInput) <= 1e-6 + kind.tolerance(4e-6));
    // Far from 0 each is x itself, with the gradient passed as it is: 25 stays 25.
    CHECK(y.back() == 25.f);
    CHECK(gi.back() == 1.f);
  }
}

NN_DEVICE_TEST_CASE("SiLU and GELU gradients agree with finite differences", "[SiLU][GELU]") {
  const Tensor x = kind.on(nn::test::randomTensor({3, 11}, 52, -4, 4));  // smooth: no kink to stay away from
  nn::SiLU silu;
  nn::GELU exact;
  nn::GELU tanh("tanh");
  for (nn::Module* m :
       {static_cast<nn::Module*>(&silu), static_cast<nn::Module*>(&exact), static_cast<nn::Module*>(&tanh)}) {
    CAPTURE(m->toString());
    CHECK_THAT(nn::test::checkInputGradient(*m, x), nn::test::AgreesWithin(1e-3));
    CHECK(m->parameters().first.empty());
  }
}

NN_DEVICE_TEST_CASE("GELU keeps its form through clone, save and load, and refuses another", "[GELU]") {
  CHECK(nn::GELU().toString() == "nn.GELU(approximate='none')");  // PyTorch's default, the exact form
  nn::GELU tanh("tanh");
  CHECK(tanh.toString() == "nn.GELU(approximate='tanh')");
  CHECK(std::get<std::string>(tanh.config().values()[0].second) == "tanh");
  const Tensor x = kind.on(Tensor::fromVector({13}, nn::test::kActivationX));
  const std::vector<float> y = tanh.forward(x).toVector();
  for (const nn::ModulePtr& copy : {tanh.clone(), nn::test::savedAndLoaded(tanh)}) {
    auto gelu = std::dynamic_pointer_cast<nn::GELU>(copy);
    REQUIRE(gelu);
    CHECK(gelu->options().approximate == "tanh");
    copy->to(kind.device());
    CHECK(copy->forward(x).toVector() == y);
  }
  nn::GELU exact;
  CHECK(std::dynamic_pointer_cast<nn::GELU>(nn::test::savedAndLoaded(exact))->options().approximate == "none");
  // PyTorch's two names only, spelt as PyTorch spells them.
  CHECK_THROWS_WITH(nn::GELU("erf"), Catch::Contains("nn.GELU: expected approximate 'none' or 'tanh', got 'erf'"));
  CHECK_THROWS_WITH(nn::GELU("Tanh"), Catch::Contains("got 'Tanh'"));
  CHECK_THROWS_WITH(nn::GELU(""), Catch::Contains("got ''"));
}

NN_DEVICE_TEST_CASE("SiLU and GELU reject a gradOutput of the wrong size, naming themselves", "[SiLU][GELU]") {
  nn::SiLU silu;
  nn::GELU gelu("tanh");
  const Tensor x = Tensor::zeros({2, 3}, kind.device());
  silu.forward(x);
  gelu.forward(x);
  REQUIRE_THROWS_WITH(silu.backward(x, Tensor::zeros({3, 2}, kind.device())),
                      Catch::Contains("nn.SiLU") && Catch::Contains("[2, 3]") && Catch::Contains("[3, 2]"));
  REQUIRE_THROWS_WITH(
      gelu.backward(x, Tensor::zeros({6}, kind.device())),
      Catch::Contains("nn.GELU(approximate='tanh')") && Catch::Contains("[2, 3]") && Catch::Contains("[6]"));
}

NN_DEVICE_TEST_CASE("SiLU and GELU on another device give the host modules' floats, and keep in copies",
                    "[SiLU][GELU]") {
  // More elements than one grid of CUDA blocks covers, and a strided input. On cpu:1 the same
  // loops as on cpu:0: the same bits. CUDA's expf, erff and tanhf are within 2 ulp: outputs up to
  // 6 in size within 1e-6. The tanh form's backward multiplies the error of t = tanh(u) (2 ulp near
  // 1, 1.2e-7) by 2 t 0.5 x sqrt(2 / pi) (1 + 0.134145 x^2), up to 28 at |x| = 6: within 4e-6.
  const Tensor x = nn::test::randomTensor({(int64_t{1} << 21) + 7}, 53, -6, 6);
  const Tensor g = nn::test::randomTensor({(int64_t{1} << 21) + 7}, 54);
  std::vector<std::pair<nn::ModulePtr, nn::ModulePtr>> pairs{
      {std::make_shared<nn::SiLU>(), std::make_shared<nn::SiLU>()},
      {std::make_shared<nn::GELU>(), std::make_shared<nn::GELU>()},
      {std::make_shared<nn::GELU>("tanh"), std::make_shared<nn::GELU>("tanh")}};
  for (auto& [reference, tested] : pairs) {
    CAPTURE(reference->toString());
    const Tensor y = reference->forward(x).clone();
    const Tensor gi = reference->backward(x, g).clone();
    const Tensor xOn = x.to(kind.compared()), gOn = g.to(kind.compared());
    REQUIRE(nn::test::maxAbsDiff(tested->forward(xOn), y) <= kind.tolerance(1e-6));
    REQUIRE(nn::test::maxAbsDiff(tested->backward(xOn, gOn), gi) <= kind.tolerance(4e-6));
    const Tensor strided = nn::test::stridedOn(x.narrow(0, 0, 1000), kind.compared());
    REQUIRE_FALSE(strided.isContiguous());
    REQUIRE(nn::test::maxAbsDiff(tested->forward(strided), y.narrow(0, 0, 1000)) <= kind.tolerance(1e-6));
    nn::test::checkCopies(kind, *reference, kind.on(nn::test::randomTensor({3, 5}, 55)));
  }
}
