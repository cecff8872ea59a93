// nn::Adam, nn::Adagrad and nn::RMSprop (Torch7's optim.adam, optim.adagrad, optim.rmsprop) and
// nn::AdamW (PyTorch's): first steps derived by hand, five steps against PyTorch 1.13's optimizers
// (2.15's AdamW) and Torch7's Adam written in PyTorch's operations (tests/reference/OptimizerReference.h,
// from tests/reference/make_optimizer_reference.py), both places of Adam's epsilon, AdamW's decay apart
// from the gradient, state saved and restored (by hand and through a checkpoint) continuing bit
// for bit, and errors. On CPU devices and, where found, CUDA devices.
//
// The updates are float arithmetic and a square root, correctly rounded on every device;
// PyTorch orders some operations otherwise (and fuses some into FMAs): within 2 ulps after
// five steps.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <memory>

#include "nn/io/Checkpoint.h"
#include "nn/io/Serialize.h"
#include "nn/modules/Linear.h"
#include "nn/optim/Adagrad.h"
#include "nn/optim/Adam.h"
#include "nn/optim/AdamW.h"
#include "nn/optim/RMSprop.h"
#include "nn/optim/SGD.h"
#include "tests/support/ActivationChecks.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/reference/OptimizerReference.h"
#include "tests/support/TempDir.h"

using nn::Tensor;

namespace {

using Make = std::function<std::unique_ptr<nn::Optimizer>(std::pair<Tensor, Tensor>)>;

// Parameters and gradients of `values` on the kind's device.
std::pair<Tensor, Tensor> buffers(const nn::test::DeviceKind& kind, const std::vector<float>& values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return {kind.on(Tensor::fromVector({n}, values)), Tensor::zeros({n}, kind.device())};
}

// The parameters after each of the reference's steps, all in one vector.
std::vector<float> runReference(const nn::test::DeviceKind& kind, const Make& make, int steps = 5) {
  auto [x, g] = buffers(kind, nn::test::kOptimizerX0);
  const std::unique_ptr<nn::Optimizer> optimizer = make({x, g});
  const int64_t n = x.numel();
  std::vector<float> after;
  for (int k = 0; k < steps; ++k) {
    const std::vector<float> gradient(nn::test::kOptimizerGradients.begin() + k * n,
                                      nn::test::kOptimizerGradients.begin() + (k + 1) * n);
    g.copy_(Tensor::fromVector({n}, gradient));
    optimizer->step();
    const std::vector<float> values = x.toVector();
    after.insert(after.end(), values.begin(), values.end());
  }
  REQUIRE(optimizer->stepCount() == steps);
  return after;
}

template <typename O, typename Options>
Make maker(Options options) {
  return [options](std::pair<Tensor, Tensor> p) { return std::make_unique<O>(std::move(p), options); };
}

// Each element of `got` within `ulps` units in the last place of float rounding at the size of
// want's element or of `step`, whichever is larger: for a parameter near 0, the rounding of a
// step of that size.
void checkWithinUlpsOfStep(const std::vector<float>& got, const std::vector<float>& want, float step, int ulps) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i, got[i], want[i]);
    CHECK(std::fabs(double(got[i]) - want[i]) <=
          ulps * std::ldexp(1.0, std::ilogb(std::max(std::fabs(want[i]), step)) - 23));
  }
}

nn::AdamOptions adamOptions(double beta1, double beta2, double epsilon, double weightDecay, bool pytorchEpsilon) {
  nn::AdamOptions o;
  o.learningRate = 0.01;
  o.beta1 = beta1;
  o.beta2 = beta2;
  o.epsilon = epsilon;
  o.weightDecay = weightDecay;
  o.pytorchEpsilon = pytorchEpsilon;
  return o;
}

}  // namespace

NN_DEVICE_TEST_CASE("Adam's first step moves each parameter by the learning rate against its gradient",
                    "[Adam]") {
  // m = (1 - beta1) g, v = (1 - beta2) g^2, and the bias corrections 1 - beta1 and
  // sqrt(1 - beta2) cancel them: x - lr g / (|g| + eps'), lr sign(g) up to eps.
  for (bool pytorchEpsilon : {false, true}) {
    CAPTURE(pytorchEpsilon);
    auto [x, g] = buffers(kind, {0.5f, -1.25f, 2, 0.25f});
    g.copy_(Tensor::fromVector({4}, {3, -0.5f, 0.125f, -2}));
    nn::AdamOptions options;
    options.learningRate = 0.01;
    options.pytorchEpsilon = pytorchEpsilon;
    nn::Adam adam({x, g}, options);
    REQUIRE(adam.state()[0].second.numel() == 0);
    adam.step();
    nn::test::checkWithinUlps(x.toVector(), {0.49f, -1.24f, 1.99f, 0.26f}, 2);
    // The state: m and v of the first step.
    nn::test::checkWithinUlps(adam.state()[0].second.toVector(), {0.3f, -0.05f, 0.0125f, -0.2f}, 2);
    nn::test::checkWithinUlps(adam.state()[1].second.toVector(), {0.009f, 0.00025f, 1.5625e-5f, 0.004f}, 2);
  }
}

NN_DEVICE_TEST_CASE("AdamW's first step shrinks each parameter, then moves it by the learning rate", "[AdamW]") {
  // As Adam's first step (PyTorch's epsilon), x - lr sign(g) up to eps, after x shrinks by
  // 1 - lr weightDecay = 1 - 0.01 * 0.5 = 0.995: 0.4975 - 0.01, -1.24375 + 0.01, 1.99 - 0.01,
  // 0.24875 + 0.01. A zero gradient leaves the shrink alone: 4 * 0.995.
  auto [x, g] = buffers(kind, {0.5f, -1.25f, 2, 0.25f, 4});
  g.copy_(Tensor::fromVector({5}, {3, -0.5f, 0.125f, -2, 0}));
  nn::AdamWOptions options;
  options.learningRate = 0.01;
  options.weightDecay = 0.5;
  nn::AdamW adamw({x, g}, options);
  REQUIRE(adamw.state()[0].second.numel() == 0);
  adamw.step();
  const std::vector<float> after = x.toVector();
  nn::test::checkWithinUlps(std::vector<float>(after.begin(), after.begin() + 4), {0.4875f, -1.23375f, 1.98f, 0.25875f},
                            2);
  REQUIRE(after[4] == 4 * 0.995f);
  // The moments are Adam's of the gradient alone: the decay is not in them.
  nn::test::checkWithinUlps(adamw.state()[0].second.toVector(), {0.3f, -0.05f, 0.0125f, -0.2f, 0}, 2);
  nn::test::checkWithinUlps(adamw.state()[1].second.toVector(), {0.009f, 0.00025f, 1.5625e-5f, 0.004f, 0}, 2);
  // PyTorch's defaults: lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 1e-2.
  const nn::AdamWOptions defaults;
  REQUIRE(defaults.learningRate == 1e-3);
  REQUIRE(defaults.beta1 == 0.9);
  REQUIRE(defaults.beta2 == 0.999);
  REQUIRE(defaults.epsilon == 1e-8);
  REQUIRE(defaults.weightDecay == 1e-2);
  REQUIRE(defaults.learningRateDecay == 0);
}

NN_DEVICE_TEST_CASE("AdamW without weight decay is Adam with PyTorch's epsilon, bit for bit, and with it is not",
                    "[AdamW][Adam]") {
  nn::AdamWOptions adamw;
  adamw.learningRate = 0.01;
  adamw.beta1 = 0.8;
  adamw.beta2 = 0.99;
  adamw.epsilon = 1e-3;
  adamw.weightDecay = 0;
  const std::vector<float> adam = runReference(kind, maker<nn::Adam>(adamOptions(0.8, 0.99, 1e-3, 0, true)));
  REQUIRE(runReference(kind, maker<nn::AdamW>(adamw)) == adam);
  // Decoupled, a weight decay moves the parameters otherwise than Adam's L2 term of the same size.
  adamw.weightDecay = 0.5;
  const std::vector<float> decoupled = runReference(kind, maker<nn::AdamW>(adamw));
  const std::vector<float> coupled = runReference(kind, maker<nn::Adam>(adamOptions(0.8, 0.99, 1e-3, 0.5, true)));
  double largest = 0;
  for (size_t i = 0; i < decoupled.size(); ++i)
    largest = std::max(largest, std::fabs(double(decoupled[i]) - coupled[i]));
  REQUIRE(largest > 1e-3);
}

NN_DEVICE_TEST_CASE("AdamW matches torch.optim.AdamW 2.15 over five steps, with its defaults and a large decay",
                    "[AdamW]") {
  using namespace nn::test;
  // PyTorch 2.15 updates m with lerp_ and x with addcdiv_ (the step size times m, then divided),
  // each rounded otherwise than m beta1 + (1 - beta1) d and stepSize (m / denominator) here: a few
  // ulps of the step, which are more of a parameter near 0 (element 3, from 0) than of itself.
  checkWithinUlpsOfStep(runReference(kind, maker<nn::AdamW>(nn::AdamWOptions())), kTorchAdamW, 1e-3f, 4);
  nn::AdamWOptions options;
  options.learningRate = 0.05;
  options.beta1 = 0.8;
  options.beta2 = 0.99;
  options.epsilon = 1e-3;
  options.weightDecay = 0.5;
  checkWithinUlpsOfStep(runReference(kind, maker<nn::AdamW>(options)), kTorchAdamWDecay, 0.05f, 4);
}

NN_DEVICE_TEST_CASE("Adagrad steps by the gradient over the root of the sum of its squares", "[Adagrad]") {
  auto [x, g] = buffers(kind, {1, -2});
  nn::AdagradOptions options;
  options.learningRate = 0.1;
  options.learningRateDecay = 0.25;
  nn::Adagrad adagrad({x, g}, options);
  // Step 1: g = {3, -4}: x - 0.1 sign(g). Step 2: g = {4, -3}, the rate 0.1 / 1.25: the sums
  // of squares 25, so x - 0.08 {4, -3} / 5.
  g.copy_(Tensor::fromVector({2}, {3, -4}));
  adagrad.step();
  nn::test::checkWithinUlps(x.toVector(), {0.9f, -1.9f}, 1);
  g.copy_(Tensor::fromVector({2}, {4, -3}));
  adagrad.step();
  nn::test::checkWithinUlps(x.toVector(), {0.9f - 0.064f, -1.9f + 0.048f}, 2);
  REQUIRE(adagrad.state()[0].second.toVector() == std::vector<float>{25, 25});
  // Weight decay alone (zero gradients): d = wd x.
  auto [y, h] = buffers(kind, {2, -0.5f});
  options = nn::AdagradOptions();
  options.weightDecay = 0.5;
  nn::Adagrad decaying({y, h}, options);
  decaying.step();
  nn::test::checkWithinUlps(y.toVector(), {2 - 1e-3f, -0.5f + 1e-3f}, 1);
}

NN_DEVICE_TEST_CASE("RMSprop steps by the gradient over the root of its running mean square", "[RMSprop]") {
  auto [x, g] = buffers(kind, {1, -2, 0.5f});
  nn::RmspropOptions options;
  options.alpha = 0.75;
  nn::RMSprop rmsprop({x, g}, options);
  // m = 0.25 g^2, sqrt(m) = |g| / 2: x - 0.01 g / (|g| / 2) = x - 0.02 sign(g). A zero gradient
  // leaves its parameter: 0 / (0 + eps).
  g.copy_(Tensor::fromVector({3}, {8, -0.25f, 0}));
  rmsprop.step();
  nn::test::checkWithinUlps(x.toVector(), {0.98f, -1.98f, 0.5f}, 1);
  REQUIRE(rmsprop.state()[0].second.toVector() == std::vector<float>{16, 0.015625f, 0});
}

NN_DEVICE_TEST_CASE("RMSprop starts its mean square at initialMean, as Torch7's config.initialMean", "[RMSprop]") {
  auto [x, g] = buffers(kind, {1, -2, 0.5f});
  nn::RmspropOptions options;
  options.alpha = 0.75;
  options.initialMean = 4;
  nn::RMSprop rmsprop({x, g}, options);
  g.copy_(Tensor::fromVector({3}, {8, -0.25f, 0}));
  rmsprop.step();
  // m = 0.75 * 4 + 0.25 g^2, exact in floats; x - 0.01 g / (sqrt(m) + 1e-8).
  REQUIRE(rmsprop.state()[0].second.toVector() == std::vector<float>{19, 3.015625f, 3});
  nn::test::checkWithinUlps(x.toVector(),
                            {static_cast<float>(1 - 0.08 / std::sqrt(19.0)),
                             static_cast<float>(-2 + 0.0025 / std::sqrt(3.015625)), 0.5f},
                            2);
  // A second step starts from the first's mean square, not from initialMean again.
  rmsprop.step();
  REQUIRE(rmsprop.state()[0].second.toVector()[2] == 2.25f);
  options.initialMean = -1;
  REQUIRE_THROWS_WITH(nn::RMSprop({x, g}, options), Catch::Contains("nn.RMSprop") && Catch::Contains("initial mean"));
}

NN_DEVICE_TEST_CASE("Adam with pytorchEpsilon matches torch.optim.Adam 1.13 over five steps", "[Adam]") {
  using namespace nn::test;
  checkWithinUlps(runReference(kind, maker<nn::Adam>(adamOptions(0.9, 0.999, 1e-8, 0.01, true))), kTorchAdam, 2);
  checkWithinUlps(runReference(kind, maker<nn::Adam>(adamOptions(0.8, 0.99, 1e-3, 0, true))), kTorchAdamEps, 2);
}

NN_DEVICE_TEST_CASE("Adam by default is Torch7's optim.adam, epsilon and learning rate decay included", "[Adam]") {
  using namespace nn::test;
  nn::AdamOptions options = adamOptions(0.8, 0.99, 1e-3, 0.01, false);
  options.learningRateDecay = 0.1;
  checkWithinUlps(runReference(kind, maker<nn::Adam>(options)), kTorch7Adam, 2);
  // Where sqrt(v) is near epsilon the two places of epsilon differ: the option is not a no-op.
  const std::vector<float> torch7 = runReference(kind, maker<nn::Adam>(adamOptions(0.8, 0.99, 1e-3, 0, false)));
  double largest = 0;
  for (size_t i = 0; i < torch7.size(); ++i) largest = std::max(largest, std::fabs(double(torch7[i]) - kTorchAdamEps[i]));
  REQUIRE(largest > 1e-5);
}

NN_DEVICE_TEST_CASE("Adagrad matches torch.optim.Adagrad 1.13 over five steps", "[Adagrad]") {
  nn::AdagradOptions options;
  options.learningRate = 0.1;
  options.learningRateDecay = 0.05;
  options.weightDecay = 0.01;
  nn::test::checkWithinUlps(runReference(kind, maker<nn::Adagrad>(options)), nn::test::kTorchAdagrad, 2);
}

NN_DEVICE_TEST_CASE("RMSprop matches torch.optim.RMSprop 1.13 over five steps", "[RMSprop]") {
  nn::RmspropOptions options;
  options.learningRate = 0.01;
  options.alpha = 0.9;
  options.weightDecay = 0.01;
  nn::test::checkWithinUlps(runReference(kind, maker<nn::RMSprop>(options)), nn::test::kTorchRMSprop, 2);
}

NN_DEVICE_TEST_CASE("Adam, AdamW, Adagrad and RMSprop restored after two steps take the same next steps, bit for bit",
                    "[Adam][AdamW][Adagrad][RMSprop]") {
  nn::AdamOptions adam = adamOptions(0.8, 0.99, 1e-3, 0.01, false);
  adam.learningRateDecay = 0.1;
  nn::AdamWOptions adamw;
  adamw.learningRate = 0.05;
  adamw.weightDecay = 0.5;
  nn::AdagradOptions adagrad;
  adagrad.learningRateDecay = 0.05;
  for (const Make& make : {maker<nn::Adam>(adam), maker<nn::AdamW>(adamw), maker<nn::Adagrad>(adagrad),
                           maker<nn::RMSprop>(nn::RmspropOptions())}) {
    const std::vector<float> straight = runReference(kind, make);
    // Two steps, then the state into a new optimizer over a copy of the parameters.
    auto [x, g] = buffers(kind, nn::test::kOptimizerX0);
    const std::unique_ptr<nn::Optimizer> first = make({x, g});
    CAPTURE(first->typeName());
    const std::vector<float>& all = nn::test::kOptimizerGradients;
    for (int k = 0; k < 2; ++k) {
      g.copy_(Tensor::fromVector({8}, std::vector<float>(all.begin() + 8 * k, all.begin() + 8 * (k + 1))));
      first->step();
    }
    auto [y, h] = buffers(kind, x.toVector());
    const std::unique_ptr<nn::Optimizer> resumed = make({y, h});
    for (const auto& [name, buffer] : first->state()) resumed->setState(name, buffer.to(nn::Device()));
    resumed->setStepCount(first->stepCount());
    for (int k = 2; k < 5; ++k) {
      h.copy_(Tensor::fromVector({8}, std::vector<float>(all.begin() + 8 * k, all.begin() + 8 * (k + 1))));
      resumed->step();
    }
    REQUIRE(y.toVector() == std::vector<float>(straight.end() - 8, straight.end()));
  }
}

NN_DEVICE_TEST_CASE("Adam's state follows its module to another device and goes on as it was", "[Adam]") {
  // Two steps on the kind's device, the module moved to another device (a CPU device for a
  // CUDA kind), three more there: the state made by the first step moves with the parameters,
  // and the floats are those of a run that stayed (the updates round alike on every device).
  auto run = [&](bool move) {
    nn::manualSeed(5);
    nn::Linear model(3, 2);
    model.to(kind.device());
    nn::Adam adam(model.getParameters());
    for (int k = 0; k < 5; ++k) {
      if (move && k == 2) model.to(kind.other());
      Tensor gradients = model.getParameters().second;
      gradients.copy_(nn::test::randomTensor(gradients.sizes(), 10 + k));
      adam.step();
    }
    for (const auto& [name, buffer] : adam.state()) {
      CAPTURE(name);
      CHECK(buffer.device() == (move ? kind.other() : kind.device()));
    }
    return model.getParameters().first.toVector();
  };
  const std::vector<float> moved = run(true);
  CHECK(moved == run(false));
}

NN_DEVICE_TEST_CASE("a checkpoint keeps Adam's state and step count, and refuses another optimizer",
                    "[Adam][checkpoint]") {
  nn::test::TempDir dir;
  const std::string path = dir.file("adam.safetensors");
  nn::manualSeed(5);
  auto model = std::make_shared<nn::Linear>(3, 2);
  model->to(kind.device());
  std::pair<Tensor, Tensor> parameters = model->getParameters();
  parameters.second.copy_(nn::test::randomTensor(parameters.second.sizes(), 6));
  nn::Adam adam(parameters);
  adam.step();
  adam.step();
  nn::BatchIterator batches{Tensor::zeros({3, 3}), Tensor::zeros({3}), 2};
  nn::TrainingState state{model.get(), &adam, &batches, 0};
  nn::saveCheckpoint(state, path);
  REQUIRE(nn::readSafetensorsMetadata(path).at("training.optimizer") == "adam");

  auto restoredModel = std::make_shared<nn::Linear>(3, 2);
  restoredModel->to(kind.device());
  nn::Adam restored(restoredModel->getParameters());
  nn::TrainingState restoredState{restoredModel.get(), &restored, &batches, 0};
  nn::loadCheckpoint(restoredState, path);
  REQUIRE(restored.stepCount() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CAPTURE(adam.state()[i].first);
    REQUIRE(restored.state()[i].second.toVector() == adam.state()[i].second.toVector());
  }
  REQUIRE(restoredModel->getParameters().first.toVector() == parameters.first.toVector());

  nn::SGD sgd(restoredModel->getParameters());
  nn::TrainingState sgdState{restoredModel.get(), &sgd, &batches, 0};
  REQUIRE_THROWS_WITH(nn::loadCheckpoint(sgdState, path),
                      Catch::Contains(path) && Catch::Contains("'adam'") && Catch::Contains("'sgd'"));
}

NN_DEVICE_TEST_CASE("a checkpoint keeps AdamW's state and step count, and Adam refuses it", "[AdamW][checkpoint]") {
  nn::test::TempDir dir;
  const std::string path = dir.file("adamw.safetensors");
  nn::manualSeed(5);
  auto model = std::make_shared<nn::Linear>(3, 2);
  model->to(kind.device());
  std::pair<Tensor, Tensor> parameters = model->getParameters();
  parameters.second.copy_(nn::test::randomTensor(parameters.second.sizes(), 6));
  nn::AdamW adamw(parameters);
  adamw.step();
  adamw.step();
  nn::BatchIterator batches{Tensor::zeros({3, 3}), Tensor::zeros({3}), 2};
  nn::TrainingState state{model.get(), &adamw, &batches, 0};
  nn::saveCheckpoint(state, path);
  REQUIRE(nn::readSafetensorsMetadata(path).at("training.optimizer") == "adamw");

  auto restoredModel = std::make_shared<nn::Linear>(3, 2);
  restoredModel->to(kind.device());
  nn::AdamW restored(restoredModel->getParameters());
  nn::TrainingState restoredState{restoredModel.get(), &restored, &batches, 0};
  nn::loadCheckpoint(restoredState, path);
  REQUIRE(restored.stepCount() == 2);
  REQUIRE(restored.state()[0].first == "adamw.m");
  REQUIRE(restored.state()[1].first == "adamw.v");
  for (size_t i = 0; i < 2; ++i) {
    CAPTURE(adamw.state()[i].first);
    REQUIRE(restored.state()[i].second.toVector() == adamw.state()[i].second.toVector());
  }
  REQUIRE(restoredModel->getParameters().first.toVector() == parameters.first.toVector());
  // The next step of each is the same, to the bit.
  restoredModel->getParameters().second.copy_(parameters.second);
  adamw.step();
  restored.step();
  REQUIRE(restoredModel->getParameters().first.toVector() == parameters.first.toVector());

  nn::Adam adam(restoredModel->getParameters());
  nn::TrainingState adamState{restoredModel.get(), &adam, &batches, 0};
  REQUIRE_THROWS_WITH(nn::loadCheckpoint(adamState, path),
                      Catch::Contains(path) && Catch::Contains("'adamw'") && Catch::Contains("'adam'"));
}

NN_DEVICE_TEST_CASE("Adam, Adagrad and RMSprop reject bad options and state, naming themselves",
                    "[Adam][Adagrad][RMSprop]") {
  auto [x, g] = buffers(kind, {1, 2, 3, 4});
  nn::AdamOptions adam;
  adam.beta1 = 1;
  REQUIRE_THROWS_WITH(nn::Adam({x, g}, adam), Catch::Contains("nn.Adam") && Catch::Contains("beta1"));
  adam = nn::AdamOptions();
  adam.beta2 = -0.5;
  REQUIRE_THROWS_WITH(nn::Adam({x, g}, adam), Catch::Contains("nn.Adam") && Catch::Contains("beta2"));
  adam = nn::AdamOptions();
  adam.learningRate = NAN;
  REQUIRE_THROWS_WITH(nn::Adam({x, g}, adam), Catch::Contains("nn.Adam") && Catch::Contains("learning rate"));
  nn::AdagradOptions adagrad;
  adagrad.epsilon = -1;
  REQUIRE_THROWS_WITH(nn::Adagrad({x, g}, adagrad), Catch::Contains("nn.Adagrad") && Catch::Contains("epsilon"));
  nn::RmspropOptions rmsprop;
  rmsprop.alpha = 1.5;
  REQUIRE_THROWS_WITH(nn::RMSprop({x, g}, rmsprop), Catch::Contains("nn.RMSprop") && Catch::Contains("alpha"));
  rmsprop = nn::RmspropOptions();
  rmsprop.weightDecay = -0.1;
  REQUIRE_THROWS_WITH(nn::RMSprop({x, g}, rmsprop), Catch::Contains("nn.RMSprop") && Catch::Contains("weight decay"));

  // Options changed between steps are checked at the next step.
  nn::Adam optimizer({x, g});
  optimizer.options().epsilon = -1;
  REQUIRE_THROWS_WITH(optimizer.step(), Catch::Contains("nn.Adam") && Catch::Contains("epsilon"));
  REQUIRE(optimizer.stepCount() == 0);
  // State by name and size; an unknown name lists the known ones.
  REQUIRE_THROWS_WITH(optimizer.setState("momentum", Tensor::zeros({4})),
                      Catch::Contains("nn.Adam") && Catch::Contains("'adam.m', 'adam.v'"));
  REQUIRE_THROWS_WITH(optimizer.setState("adam.v", Tensor::zeros({3})),
                      Catch::Contains("nn.Adam") && Catch::Contains("[4]") && Catch::Contains("[3]"));
  REQUIRE_THROWS_WITH(optimizer.setStepCount(-2), Catch::Contains("nn.Adam") && Catch::Contains("-2"));
  REQUIRE_THROWS_WITH(nn::RMSprop({x, Tensor::zeros({5}, kind.device())}),
                      Catch::Contains("nn.RMSprop") && Catch::Contains("[4]") && Catch::Contains("[5]"));
  REQUIRE_THROWS_WITH(nn::Adagrad({x, Tensor::zeros({4}, kind.other())}),
                      Catch::Contains("nn.Adagrad") && Catch::Contains(kind.other().str()));
  nn::AdamW adamw({x, g});
  REQUIRE_THROWS_WITH(adamw.setState("adam.m", Tensor::zeros({4})),
                      Catch::Contains("nn.AdamW") && Catch::Contains("'adamw.m', 'adamw.v'"));
}
