// nn::GradScaler (nn/optim/GradScaler.h), as torch.amp.GradScaler: its defaults and checks; scale
// multiplies the loss gradient; unscale equals division (exactly for the powers of two of the
// dynamic scale); an inf or NaN gradient skips the step and halves the scale, finite gradients
// whose sum overflows do not; growthInterval good steps double it; a static scale stays; its
// state round-trips through a checkpoint, and a checkpoint without one loads; with a
// DataParallelTable on cpu:0 and cpu:1 a scaled step equals the unscaled one, and an inf in one
// replica's slice skips the step.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "nn/nn.h"
#include "nn/parallel/DataParallelTable.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/support/TempDir.h"

using nn::GradScaler;
using nn::GradScalerOptions;
using nn::Tensor;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

nn::SgdOptions sgdOptions(float learningRate) {
  nn::SgdOptions o;
  o.learningRate = learningRate;
  return o;
}

// A Linear(3, 2) on `device` and SGD over it, its gradients set to `values`.
struct Small {
  explicit Small(const nn::Device& device = nn::Device()) : model(made(device)) {}
  static std::shared_ptr<nn::Linear> made(const nn::Device& device) {
    nn::manualSeed(5);
    auto linear = std::make_shared<nn::Linear>(3, 2);
    linear->to(device);
    return linear;
  }
  std::shared_ptr<nn::Linear> model;
  nn::SGD sgd{model->getParameters(), sgdOptions(0.1f)};
  void setGradients(const std::vector<float>& values) {
    Tensor g = sgd.gradients();
    g.copy_(Tensor::fromVector({static_cast<int64_t>(values.size())}, values));
  }
};

const std::vector<float> kGradients = {0.5f, -1.25f, 3.f, 1e-3f, -7.f, 0.75f, 2.5f, -0.125f};

}  // namespace

TEST_CASE("GradScaler's defaults are torch.amp.GradScaler's, and options out of range are refused",
          "[GradScaler]") {
  GradScaler scaler;
  CHECK(scaler.getScale() == 65536.f);
  CHECK(scaler.options().growthFactor == 2.0);
  CHECK(scaler.options().backoffFactor == 0.5);
  CHECK(scaler.options().growthInterval == 2000);
  CHECK(scaler.growthTracker() == 0);
  auto with = [](auto set) {
    GradScalerOptions o;
    set(o);
    return o;
  };
  CHECK_THROWS_WITH(GradScaler(with([](GradScalerOptions& o) { o.initScale = 0; })),
                    Catch::Contains("nn.GradScaler") && Catch::Contains("initial scale"));
  CHECK_THROWS_WITH(GradScaler(with([](GradScalerOptions& o) { o.initScale = 1e39; })),
                    Catch::Contains("initial scale"));
  CHECK_THROWS_WITH(GradScaler(with([](GradScalerOptions& o) { o.growthFactor = 1; })),
                    Catch::Contains("growth factor > 1, got 1"));
  CHECK_THROWS_WITH(GradScaler(with([](GradScalerOptions& o) { o.backoffFactor = 1; })),
                    Catch::Contains("backoff factor in (0, 1), got 1"));
  CHECK_THROWS_WITH(GradScaler(with([](GradScalerOptions& o) { o.growthInterval = 0; })),
                    Catch::Contains("growth interval >= 1, got 0"));
}

TEST_CASE("scale multiplies the loss gradient in place; unscale equals division", "[GradScaler]") {
  GradScaler scaler;
  Tensor gradient = Tensor::fromVector({4}, {1.f, -0.5f, 3e-5f, 0.f});
  const Tensor scaled = scaler.scale(gradient);
  CHECK(scaled.data() == gradient.data());
  CHECK(gradient.toVector() == std::vector<float>{65536.f, -32768.f, 3e-5f * 65536.f, 0.f});

  for (float initial : {65536.f, 3.f}) {
    CAPTURE(initial);
    GradScalerOptions o;
    o.initScale = initial;
    GradScaler s(o);
    Small net;
    net.setGradients(kGradients);
    s.unscale(net.sgd);
    CHECK_FALSE(s.foundInf());
    const std::vector<float> unscaled = net.sgd.gradients().toVector();
    for (size_t i = 0; i < kGradients.size(); ++i) {
      const float quotient = kGradients[i] / initial;
      if (initial == 65536.f)
        CHECK(unscaled[i] == quotient);  // a power of two: exact
      else
        CHECK(std::fabs(unscaled[i] - quotient) <= std::ldexp(std::fabs(quotient), -23));
    }
    CHECK_THROWS_WITH(s.unscale(net.sgd), Catch::Contains("twice in one step"));
  }
}

TEST_CASE("An inf or NaN gradient skips the step and halves the scale; growthInterval good steps double it",
          "[GradScaler]") {
  GradScalerOptions o;
  o.growthInterval = 3;
  GradScaler scaler(o);
  Small net;
  const std::vector<float> before = net.sgd.parameters().toVector();
  for (float bad : {kInf, -kInf, std::nanf("")}) {
    CAPTURE(bad);
    std::vector<float> g = kGradients;
    g[5] = bad;
    net.setGradients(g);
    const float scale = scaler.getScale();
    CHECK_FALSE(scaler.step(net.sgd));
    CHECK(scaler.foundInf());
    CHECK(net.sgd.parameters().toVector() == before);
    CHECK(net.sgd.stepCount() == 0);
    scaler.update();
    CHECK(scaler.getScale() == scale / 2);
    CHECK(scaler.growthTracker() == 0);
  }
  CHECK(scaler.getScale() == 8192.f);
  // Two good steps, a skipped one (the tracker starts again), then three: the scale doubles.
  for (int step = 0; step < 6; ++step) {
    CAPTURE(step);
    std::vector<float> g = kGradients;
    if (step == 2) g[0] = kInf;
    net.setGradients(g);
    CHECK(scaler.step(net.sgd) == (step != 2));
    scaler.update();
    if (step < 2) CHECK(scaler.growthTracker() == step + 1);
    if (step == 2) CHECK(scaler.getScale() == 4096.f);
  }
  CHECK(scaler.getScale() == 8192.f);
  CHECK(scaler.growthTracker() == 0);
  CHECK(net.sgd.stepCount() == 5);
  CHECK(net.sgd.parameters().toVector() != before);
}

TEST_CASE("A static scale stays, and still skips a step with an inf", "[GradScaler]") {
  GradScalerOptions o;
  o.initScale = 1024;
  o.dynamic = false;
  o.growthInterval = 1;
  GradScaler scaler(o);
  Small net;
  std::vector<float> g = kGradients;
  net.setGradients(g);
  CHECK(scaler.step(net.sgd));
  scaler.update();
  g[1] = kInf;
  net.setGradients(g);
  CHECK_FALSE(scaler.step(net.sgd));
  scaler.update();
  CHECK(scaler.getScale() == 1024.f);
}

NN_DEVICE_TEST_CASE("Finite gradients whose sum overflows are finite: the check is element by element", "[GradScaler]") {
  // Scale 1: the gradients unscale to themselves. 3e38 + 3e38 is beyond a float's 3.4e38.
  GradScalerOptions o;
  o.initScale = 1;
  o.dynamic = false;
  GradScaler scaler(o);
  for (float big : {3e38f, -3e38f}) {
    CAPTURE(big);
    Small net(kind.device());
    std::vector<float> g = kGradients;
    g[0] = g[1] = big;
    g[4] = std::numeric_limits<float>::max();
    g[5] = -std::numeric_limits<float>::max();
    net.setGradients(g);
    CHECK(scaler.step(net.sgd));
    CHECK_FALSE(scaler.foundInf());
    CHECK(net.sgd.gradients().toVector() == g);
    CHECK(net.sgd.stepCount() == 1);
    scaler.update();
  }
  // And beside them an -inf, a +inf, a NaN are still found, wherever they are.
  for (size_t at : {size_t{0}, size_t{3}, size_t{7}})
    for (float bad : {-kInf, kInf, std::nanf("")}) {
      CAPTURE(at, bad);
      Small net(kind.device());
      std::vector<float> g(kGradients.size(), 3e38f);
      g[at] = bad;
      net.setGradients(g);
      CHECK_FALSE(scaler.step(net.sgd));
      CHECK(scaler.foundInf());
      scaler.update();
    }
}

TEST_CASE("GradScaler's state round-trips through a checkpoint; a checkpoint without one loads", "[GradScaler]") {
  nn::test::TempDir dir;
  const std::string path = dir.file("checkpoint.safetensors"), plain = dir.file("plain.safetensors");
  GradScalerOptions o;
  o.growthInterval = 10;
  GradScaler scaler(o);
  Small net;
  nn::BatchIterator batches{Tensor::zeros({3, 3}), Tensor::zeros({3}), 2};
  // A skip (the scale halved) and three good steps.
  for (int step = 0; step < 4; ++step) {
    std::vector<float> g = kGradients;
    if (step == 0) g[2] = kInf;
    net.setGradients(g);
    scaler.step(net.sgd);
    scaler.update();
  }
  REQUIRE(scaler.getScale() == 32768.f);
  REQUIRE(scaler.growthTracker() == 3);
  nn::TrainingState state{net.model.get(), &net.sgd, &batches, 0};
  state.scaler = &scaler;
  nn::saveCheckpoint(state, path);
  state.scaler = nullptr;
  nn::saveCheckpoint(state, plain);

  GradScaler restored(o);
  Small other;
  nn::BatchIterator otherBatches{Tensor::zeros({3, 3}), Tensor::zeros({3}), 2};
  nn::TrainingState into{other.model.get(), &other.sgd, &otherBatches, 0};
  into.scaler = &restored;
  nn::loadCheckpoint(into, path);
  CHECK(restored.getScale() == 32768.f);
  CHECK(restored.growthTracker() == 3);
  // Without the scaler's metadata the scaler keeps its state; a run without a scaler ignores it.
  GradScaler fresh(o);
  into.scaler = &fresh;
  nn::loadCheckpoint(into, plain);
  CHECK(fresh.getScale() == 65536.f);
  into.scaler = nullptr;
  CHECK_NOTHROW(nn::loadCheckpoint(into, path));
  // A tracker beyond the run's interval is refused, naming the file.
  GradScalerOptions shorter;
  shorter.growthInterval = 2;
  GradScaler narrow(shorter);
  into.scaler = &narrow;
  CHECK_THROWS_WITH(nn::loadCheckpoint(into, path), Catch::Contains(path) && Catch::Contains("growth tracker"));
}

namespace {

// Linear(6, 4) in a DataParallelTable on cpu:0 and cpu:1 with SGD: the parameters after one step
// on x, the loss gradient of MSE against zero, through the scaler where given.
struct TableStep {
  std::vector<float> parameters;
  bool stepped = true;
};
TableStep tableStep(const Tensor& x, GradScaler* scaler) {
  nn::manualSeed(13);
  auto table = std::make_shared<nn::DataParallelTable>(0, true, false);
  table->add(std::make_shared<nn::Linear>(6, 4), {nn::Device::cpu(0), nn::Device::cpu(1)});
  nn::SGD sgd(table->getParameters(), sgdOptions(0.05f));
  nn::MSECriterion mse;
  table->zeroGradParameters();
  const Tensor& out = table->forward(x);
  const Tensor target = Tensor::zeros(out.sizes());
  mse.forward(out, target);
  Tensor gradient = mse.backward(out, target);
  TableStep r;
  if (scaler) {
    table->backward(x, scaler->scale(gradient));
    r.stepped = scaler->step(sgd);
    scaler->update();
  } else {
    table->backward(x, gradient);
    sgd.step();
  }
  r.parameters = sgd.parameters().toVector();
  return r;
}

}  // namespace

TEST_CASE("With a DataParallelTable on cpu:0 and cpu:1, a scaled step equals the unscaled one; an inf skips it",
          "[GradScaler][DataParallelTable]") {
  const Tensor x = nn::test::randomTensor({8, 6}, 17);
  GradScaler scaler;
  const TableStep scaled = tableStep(x, &scaler);
  const TableStep plain = tableStep(x, nullptr);
  CHECK(scaled.stepped);
  CHECK(scaled.parameters == plain.parameters);
  // An inf in the second replica's half of the batch: its gradients, summed onto the first
  // replica's, are inf; the step is skipped and the scale halved.
  std::vector<float> bad = x.toVector();
  bad[7 * 6 + 2] = kInf;
  const TableStep skipped = tableStep(Tensor::fromVector({8, 6}, bad), &scaler);
  CHECK_FALSE(skipped.stepped);
  CHECK(scaler.getScale() == 32768.f);
  nn::manualSeed(13);
  nn::Linear initial(6, 4);
  std::vector<float> start = initial.weight.toVector();
  const std::vector<float> bias = initial.bias.toVector();
  start.insert(start.end(), bias.begin(), bias.end());
  CHECK(skipped.parameters == start);
}
