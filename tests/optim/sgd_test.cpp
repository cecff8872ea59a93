// nn::SGD: three steps derived by hand from Torch7's optim.sgd for each option, a cross-check
// with torch.optim.SGD 1.13, checkpointing of its state, and its use over a module, on every
// device type.
//
// Torch7's optim.sgd, for the step k counted from 0 (evalCounter), with d = dfdx:
//   d = d + weightDecay * x                                  (if weightDecay != 0)
//   if momentum != 0:
//     v = d (first step)  or  v = momentum * v + (1 - dampening) * d,   dampening defaulting to momentum
//     d = nesterov ? d + momentum * v : v
//   x = x - learningRate / (1 + k * learningRateDecay) * d
#include "nn/optim/SGD.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "nn/modules/Linear.h"
#include "nn/tensor/Random.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

// Runs three steps on `device` from x = {1, -2} with the gradients {1, 2}, {-1, 0.5},
// {0.5, -1}, and returns x after each step.
std::vector<std::vector<float>> threeSteps(const nn::SgdOptions& options, const nn::Device& device) {
  Tensor x = Tensor::fromVector({2}, {1, -2}, device);
  Tensor g = Tensor::zeros({2}, device);
  nn::SGD sgd({x, g}, options);
  const std::vector<std::vector<float>> gradients{{1, 2}, {-1, 0.5f}, {0.5f, -1}};
  std::vector<std::vector<float>> out;
  for (const std::vector<float>& gradient : gradients) {
    g.copy_(Tensor::fromVector({2}, gradient));
    sgd.step();
    REQUIRE(g.toVector() == gradient);  // the gradient buffer is left as it was
    out.push_back(x.toVector());
  }
  REQUIRE(sgd.stepCount() == 3);
  return out;
}

void requireSteps(const std::vector<std::vector<float>>& actual, const std::vector<std::vector<float>>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t k = 0; k < actual.size(); ++k) {
    INFO("step " << k + 1);
    REQUIRE(actual[k].size() == expected[k].size());
    for (size_t i = 0; i < actual[k].size(); ++i) REQUIRE(actual[k][i] == Approx(expected[k][i]).epsilon(1e-6).margin(1e-7));
  }
}

// The element of a one-element tensor on any device.
float only(const Tensor& t) { return t.toVector().at(0); }

nn::SgdOptions options(float learningRate) {
  nn::SgdOptions o;
  o.learningRate = learningRate;
  return o;
}

}  // namespace

NN_DEVICE_TEST_CASE("SGD without options subtracts learningRate * gradient", "[SGD]") {
  // x1 = {1, -2} - 0.1 {1, 2}; x2 = x1 - 0.1 {-1, 0.5}; x3 = x2 - 0.1 {0.5, -1}.
  requireSteps(threeSteps(options(0.1f), kind.device()), {{0.9f, -2.2f}, {1.0f, -2.25f}, {0.95f, -2.15f}});
}

NN_DEVICE_TEST_CASE("SGD momentum with Torch7's default dampening", "[SGD]") {
  nn::SgdOptions o = options(0.1f);
  o.momentum = 0.5f;  // dampening unset: 0.5 as well
  // v1 = g1 = {1, 2};                               x1 = x0 - 0.1 v1 = {0.9, -2.2}
  // v2 = 0.5 v1 + 0.5 g2 = {0, 1.25};               x2 = {0.9, -2.325}
  // v3 = 0.5 v2 + 0.5 g3 = {0.25, 0.125};           x3 = {0.875, -2.3375}
  requireSteps(threeSteps(o, kind.device()), {{0.9f, -2.2f}, {0.9f, -2.325f}, {0.875f, -2.3375f}});
}

NN_DEVICE_TEST_CASE("SGD momentum with an explicit dampening", "[SGD]") {
  nn::SgdOptions o = options(0.1f);
  o.momentum = 0.5f;
  o.dampening = 0.f;
  // v1 = g1 = {1, 2};                   x1 = {0.9, -2.2}
  // v2 = 0.5 v1 + g2 = {-0.5, 1.5};     x2 = {0.95, -2.35}
  // v3 = 0.5 v2 + g3 = {0.25, -0.25};   x3 = {0.925, -2.325}
  requireSteps(threeSteps(o, kind.device()), {{0.9f, -2.2f}, {0.95f, -2.35f}, {0.925f, -2.325f}});
}

NN_DEVICE_TEST_CASE("SGD Nesterov momentum", "[SGD]") {
  nn::SgdOptions o = options(0.1f);
  o.momentum = 0.5f;
  o.dampening = 0.f;
  o.nesterov = true;
  // v1 = g1 = {1, 2};                d1 = g1 + 0.5 v1 = {1.5, 3};          x1 = {0.85, -2.3}
  // v2 = 0.5 v1 + g2 = {-0.5, 1.5};  d2 = g2 + 0.5 v2 = {-1.25, 1.25};     x2 = {0.975, -2.425}
  // v3 = 0.5 v2 + g3 = {0.25, -0.25}; d3 = g3 + 0.5 v3 = {0.625, -1.125};  x3 = {0.9125, -2.3125}
  requireSteps(threeSteps(o, kind.device()), {{0.85f, -2.3f}, {0.975f, -2.425f}, {0.9125f, -2.3125f}});
}

NN_DEVICE_TEST_CASE("SGD weight decay", "[SGD]") {
  nn::SgdOptions o = options(0.1f);
  o.weightDecay = 0.1f;
  // d1 = g1 + 0.1 x0 = {1.1, 1.8};           x1 = {0.89, -2.18}
  // d2 = g2 + 0.1 x1 = {-0.911, 0.282};      x2 = {0.9811, -2.2082}
  // d3 = g3 + 0.1 x2 = {0.59811, -1.22082};  x3 = {0.921289, -2.086118}
  requireSteps(threeSteps(o, kind.device()), {{0.89f, -2.18f}, {0.9811f, -2.2082f}, {0.921289f, -2.086118f}});
}

NN_DEVICE_TEST_CASE("SGD learning rate decay", "[SGD]") {
  nn::SgdOptions o = options(0.1f);
  o.learningRateDecay = 0.5f;
  // Rates 0.1 / (1 + 0.5 k) = 0.1, 1/15, 0.05:
  // x1 = x0 - 0.1 g1 = {0.9, -2.2}; x2 = x1 - g2 / 15 = {29/30, -67/30}; x3 = x2 - 0.05 g3 = {113/120, -131/60}
  requireSteps(threeSteps(o, kind.device()), {{0.9f, -2.2f}, {29.f / 30, -67.f / 30}, {113.f / 120, -131.f / 60}});
}

NN_DEVICE_TEST_CASE("SGD with every option at once", "[SGD]") {
  // One element, x0 = 1, gradient 1 on each step; learningRate 0.1, learningRateDecay 1,
  // weightDecay 0.5, momentum 0.5, dampening 0.5 (unset):
  //   k = 0: rate 0.1;  d = 1 + 0.5 * 1 = 1.5;          v = 1.5;                           x = 0.85
  //   k = 1: rate 0.05; d = 1 + 0.5 * 0.85 = 1.425;     v = 0.75 + 0.7125 = 1.4625;        x = 0.776875
  //   k = 2: rate 0.1/3; d = 1 + 0.3884375 = 1.3884375; v = 0.73125 + 0.69421875 = 1.42546875;
  //          x = 0.776875 - 1.42546875 / 30 = 0.729359375
  Tensor x = kind.on(Tensor::fromVector({1}, {1}));
  const Tensor g = kind.on(Tensor::fromVector({1}, {1}));
  nn::SgdOptions o = options(0.1f);
  o.learningRateDecay = 1;
  o.weightDecay = 0.5f;
  o.momentum = 0.5f;
  nn::SGD sgd({x, g}, o);
  REQUIRE(sgd.dampening() == 0.5f);
  const std::vector<float> expectedX{0.85f, 0.776875f, 0.729359375f};
  const std::vector<float> expectedV{1.5f, 1.4625f, 1.42546875f};
  for (int k = 0; k < 3; ++k) {
    sgd.step();
    REQUIRE(only(x) == Approx(expectedX[k]).epsilon(1e-6).margin(1e-7));
    REQUIRE(only(sgd.momentumBuffer()) == Approx(expectedV[k]).epsilon(1e-6).margin(1e-7));
  }
  REQUIRE(sgd.currentLearningRate() == Approx(0.025f));
}

NN_DEVICE_TEST_CASE("SGD matches torch.optim.SGD 1.13 where their semantics agree", "[SGD]") {
  // torch.optim.SGD([x], lr=0.05, momentum=0.9, dampening=0, weight_decay=0.01, nesterov=...)
  // from x[i] = sin(0.37 i), i < 10, with x.grad[i] = cos(0.23 i + k) on step k = 0, 1, 2.
  // PyTorch's dampening defaults to 0 and it has no learning rate decay; with dampening 0
  // it is Torch7's optim.sgd.
  const auto run = [&](bool nesterov) {
    std::vector<float> x0(10);
    for (size_t i = 0; i < x0.size(); ++i) x0[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
    Tensor x = kind.on(Tensor::fromVector({10}, x0));
    Tensor g = Tensor::zeros({10}, kind.device());
    nn::SgdOptions o = options(0.05f);
    o.momentum = 0.9f;
    o.dampening = 0.f;
    o.weightDecay = 0.01f;
    o.nesterov = nesterov;
    nn::SGD sgd({x, g}, o);
    for (int k = 0; k < 3; ++k) {
      std::vector<float> gradient(10);
      for (int i = 0; i < 10; ++i) gradient[i] = static_cast<float>(std::cos(0.23 * i + k));
      g.copy_(Tensor::fromVector({10}, gradient));
      sgd.step();
    }
    return std::make_pair(x, sgd.momentumBuffer().clone());
  };
  const auto [x, v] = run(false);
  REQUIRE(nn::test::maxAbsDiff(x, {-0.165912867f, 0.227642372f, 0.57939446f, 0.84503895f, 0.992330611f, 1.00525224f,
                                   0.885976553f, 0.654364944f, 0.345084369f, 0.00273963809f}) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(v, {0.878455162f, 0.485259116f, 0.0656958818f, -0.358837068f, -0.766476452f,
                                   -1.13597751f, -1.44780219f, -1.68515849f, -1.83493567f, -1.88847613f}) < 1e-6);
  const auto [xn, vn] = run(true);
  REQUIRE(nn::test::maxAbsDiff(xn, {-0.20532088f, 0.205917284f, 0.57653296f, 0.86125952f, 1.02686906f, 1.05638981f,
                                    0.951116621f, 0.730157137f, 0.427589506f, 0.0876305774f}) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(vn, {0.877402842f, 0.484316111f, 0.0649123788f, -0.359419107f, -0.766825378f,
                                    -1.13607395f, -1.44763994f, -1.68474555f, -1.83429301f, -1.8876375f}) < 1e-6);
}

NN_DEVICE_TEST_CASE("SGD state saved after two steps and restored gives the same third step", "[SGD]") {
  nn::SgdOptions o = options(0.1f);
  o.momentum = 0.9f;
  o.learningRateDecay = 0.3f;
  o.weightDecay = 0.01f;
  const Tensor start = kind.on(nn::test::randomTensor({6}, 1));
  const std::vector<Tensor> gradients{kind.on(nn::test::randomTensor({6}, 2)), kind.on(nn::test::randomTensor({6}, 3)),
                                      kind.on(nn::test::randomTensor({6}, 4))};

  Tensor x = start.clone();
  Tensor g = Tensor::zeros({6}, kind.device());
  nn::SGD straight({x, g}, o);
  for (const Tensor& gradient : gradients) {
    g.copy_(gradient);
    straight.step();
  }

  Tensor y = start.clone();
  Tensor h = Tensor::zeros({6}, kind.device());
  nn::SGD first({y, h}, o);
  for (int k = 0; k < 2; ++k) {
    h.copy_(gradients[k]);
    first.step();
  }
  const Tensor savedBuffer = first.momentumBuffer().clone();
  const int64_t savedCount = first.stepCount();
  REQUIRE(savedCount == 2);

  nn::SGD resumed({y, h}, o);
  REQUIRE(resumed.momentumBuffer().numel() == 0);
  resumed.setMomentumBuffer(savedBuffer);
  resumed.setStepCount(savedCount);
  h.copy_(gradients[2]);
  resumed.step();
  REQUIRE(nn::test::maxAbsDiff(y, x) == 0);
  REQUIRE(nn::test::maxAbsDiff(resumed.momentumBuffer(), straight.momentumBuffer()) == 0);

  // Without the restored state the third step differs: the velocity restarts from the gradient.
  Tensor z = start.clone();
  Tensor i = Tensor::zeros({6}, kind.device());
  nn::SGD forgetful({z, i}, o);
  for (int k = 0; k < 2; ++k) {
    i.copy_(gradients[k]);
    forgetful.step();
  }
  forgetful.setMomentumBuffer(Tensor());
  i.copy_(gradients[2]);
  forgetful.step();
  REQUIRE(nn::test::maxAbsDiff(z, x) > 1e-4);
}

NN_DEVICE_TEST_CASE("SGD allocates only its momentum buffer, on the first step", "[SGD]") {
  Tensor x = kind.on(nn::test::randomTensor({100}, 5));
  const Tensor g = kind.on(nn::test::randomTensor({100}, 6));
  nn::SgdOptions o = options(0.1f);
  o.momentum = 0.9f;
  o.dampening = 0.f;
  o.nesterov = true;
  o.weightDecay = 1e-4f;
  nn::SGD sgd({x, g}, o);
  const int64_t before = nn::storageAllocationCount();
  sgd.step();
  REQUIRE(nn::storageAllocationCount() == before + 1);
  for (int k = 0; k < 5; ++k) sgd.step();
  REQUIRE(nn::storageAllocationCount() == before + 1);
}

NN_DEVICE_TEST_CASE("SGD over Module::getParameters updates the module", "[SGD]") {
  nn::manualSeed(4);
  nn::Linear linear(3, 2);
  linear.to(kind.device());
  nn::ModulePtr reference = linear.clone();
  const Tensor input = kind.on(nn::test::randomTensor({4, 3}, 7));
  const Tensor gradOutput = kind.on(nn::test::randomTensor({4, 2}, 8));
  nn::SGD sgd(linear.getParameters(), options(0.5f));
  const Tensor before = linear.weight.clone();
  for (nn::Module* m : {static_cast<nn::Module*>(&linear), reference.get()}) {
    m->zeroGradParameters();
    m->forward(input);
    m->backward(input, gradOutput);
  }
  sgd.step();
  reference->updateParameters(0.5f);
  REQUIRE(nn::test::maxAbsDiff(linear.weight, dynamic_cast<nn::Linear&>(*reference).weight) < 1e-7);
  REQUIRE(nn::test::maxAbsDiff(linear.bias, dynamic_cast<nn::Linear&>(*reference).bias) < 1e-7);
  REQUIRE(nn::test::maxAbsDiff(linear.weight, before) > 1e-3);
}

NN_DEVICE_TEST_CASE("SGD rejects inconsistent options and buffers", "[SGD]") {
  const nn::Device device = kind.device();
  const Tensor x = Tensor::zeros({4}, device);
  const Tensor g = Tensor::zeros({4}, device);
  nn::SgdOptions o = options(0.1f);
  o.nesterov = true;
  REQUIRE_THROWS_WITH(nn::SGD({x, g}, o), Catch::Contains("nn.SGD") && Catch::Contains("Nesterov"));
  o.momentum = 0.9f;  // dampening unset, so 0.9 too: still refused, as in Torch7
  REQUIRE_THROWS_WITH(nn::SGD({x, g}, o), Catch::Contains("dampening 0.9"));
  o.dampening = 0.f;
  nn::SGD sgd({x, g}, o);
  sgd.options().dampening = 0.1f;
  REQUIRE_THROWS_WITH(sgd.step(), Catch::Contains("nn.SGD") && Catch::Contains("Nesterov"));

  REQUIRE_THROWS_WITH(nn::SGD({x, Tensor::zeros({5}, device)}),
                      Catch::Contains("nn.SGD") && Catch::Contains("[4]") && Catch::Contains("[5]"));
  REQUIRE_THROWS_WITH(nn::SGD({x, Tensor::zeros({4}, kind.other())}), Catch::Contains(kind.other().str()));
  REQUIRE_THROWS_WITH(nn::SGD({Tensor::zeros({2, 4}, device).transpose(0, 1), Tensor::zeros({4, 2}, device)}),
                      Catch::Contains("contiguous"));
  REQUIRE_THROWS_WITH(sgd.setMomentumBuffer(Tensor::zeros({3}, device)),
                      Catch::Contains("nn.SGD") && Catch::Contains("[4]") && Catch::Contains("[3]"));
  REQUIRE_THROWS_WITH(sgd.setStepCount(-1), Catch::Contains("-1"));
}
