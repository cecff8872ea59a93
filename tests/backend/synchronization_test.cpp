// When the host waits for a device (Note [Host synchronisations] in nn/backend/Backend.h): a
// steady training step waits only to read the loss it asks for, allocates no tensor storage,
// and a bad class target checked on the device is still the host check's error, after which
// training goes on; copies from and to the host keep every value, only the read waits; a
// failed check names its first bad value, once; a batch larger than the staging slots, once they
// have grown to it, waits for nothing on one device or two. The bodies run on every device type
// (tests/support/DeviceTest.h); the CPU's devices are the host's own and are never waited for, so the
// cases that count waits are skipped on them (counted as skipped, with the reason).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "cunn/cunn.h"
#include "nn/backend/Backend.h"
#include "nn/nn.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/support/Skip.h"

using nn::Tensor;

namespace {

// Linear, ReLU, Linear, LogSoftMax over 20 features and 10 classes, trained with ClassNLL and
// SGD with momentum, on one device.
struct SmallTraining {
  explicit SmallTraining(const nn::Device& device) : backend(nn::backendOf(device)) {
    nn::manualSeed(5);
    net.add(std::make_shared<nn::Linear>(20, 16));
    net.add(std::make_shared<nn::ReLU>());
    net.add(std::make_shared<nn::Linear>(16, 10));
    net.add(std::make_shared<nn::LogSoftMax>());
    net.to(device);
    std::vector<float> labels(32);
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<float>(i % 10);
    hostInput = nn::test::randomTensor({32, 20}, 6);
    hostTarget = Tensor::fromVector({32}, labels);
    input = hostInput.to(device);
    target = hostTarget.to(device);
    nn::SgdOptions options;
    options.learningRate = 0.05f;
    options.momentum = 0.9f;
    sgd = std::make_unique<nn::SGD>(net.getParameters(), options);
  }

  // One step; reads the loss where asked (the criterion's forward returns it), else only the
  // criterion's gradient is computed.
  float step(bool readLoss) {
    net.zeroGradParameters();
    const Tensor& out = net.forward(input);
    const float loss = readLoss ? criterion.forward(out, target) : 0.f;
    net.backward(input, criterion.backward(out, target));
    sgd->step();
    return loss;
  }

  // The host waits that `steps` steps make.
  int64_t waitsOf(int steps, bool readLoss) {
    const int64_t before = backend.hostSynchronizations();
    for (int i = 0; i < steps; ++i) step(readLoss);
    return backend.hostSynchronizations() - before;
  }

  nn::Backend& backend;
  nn::Sequential net;
  nn::ClassNLLCriterion criterion;
  std::unique_ptr<nn::SGD> sgd;
  Tensor hostInput, hostTarget, input, target;
};

// Why the cases that count waits are skipped on CPU devices.
constexpr const char* kHostDevices =
    "CPU devices are the host's memory and run each kernel before it returns: the host never waits for "
    "one, and their backend's hostSynchronizations() is 0 by definition, so there is no wait to count";

}  // namespace

NN_DEVICE_TEST_CASE("a steady training step, its batch copied from the host, allocates no tensor storage",
                    "[synchronization]") {
  SmallTraining training(kind.device());
  // Warm-up: the modules' buffers, the optimizer's velocity, the libraries' handles, the
  // staging buffers and the check record are made here.
  for (int i = 0; i < 3; ++i) training.step(true);
  const int64_t storages = nn::storageAllocationCount();
  for (bool readLoss : {true, false, true}) training.step(readLoss);
  for (int i = 0; i < 3; ++i) {
    training.input.copy_(training.hostInput);
    training.target.copy_(training.hostTarget);
    REQUIRE(std::isfinite(training.step(true)));
  }
  REQUIRE(nn::storageAllocationCount() == storages);
}

NN_DEVICE_TEST_CASE("a steady training step waits for its device only to read the loss", "[synchronization]") {
  if (kind.isCpu()) NN_SKIP(kHostDevices);
  SmallTraining training(kind.device());
  for (int i = 0; i < 3; ++i) training.step(true);  // warm-up, as above
  // One wait: the copy of the loss to the host. None for the targets, which are checked on the
  // device.
  REQUIRE(training.waitsOf(1, true) == 1);
  REQUIRE(training.waitsOf(5, false) == 0);
  REQUIRE(training.waitsOf(3, true) == 3);
  // A batch copied from the host each step, as a training program does: the copies go through
  // staging buffers the device has finished reading, so still one wait, for the loss.
  const int64_t before = training.backend.hostSynchronizations();
  for (int i = 0; i < 3; ++i) {
    training.input.copy_(training.hostInput);
    training.target.copy_(training.hostTarget);
    REQUIRE(std::isfinite(training.step(true)));
  }
  REQUIRE(training.backend.hostSynchronizations() - before == 3);
}

NN_DEVICE_TEST_CASE("a bad class target is the host check's error wherever it is checked, and training goes on",
                    "[synchronization]") {
  SmallTraining training(kind.device());
  const float first = training.step(true);
  std::vector<float> labels = training.hostTarget.toVector();
  labels[7] = 10.f;
  const Tensor bad = Tensor::fromVector({32}, labels).to(kind.device());
  const Tensor& out = training.net.forward(training.input);
  // The loss's read reports it: on the host before the loss, on a CUDA device after.
  REQUIRE_THROWS_WITH(
      training.criterion.forward(out, bad),
      Catch::StartsWith("nn.ClassNLLCriterion: target 10 at position 7 is not a class index in [0, 10)"));
  // Without a read of the loss, the next read of anything on the device reports it.
  REQUIRE_THROWS_WITH(
      training.criterion.backward(out, bad).toVector(),
      Catch::StartsWith("nn.ClassNLLCriterion: target 10 at position 7 is not a class index in [0, 10)"));
  // Reported once: the steps that follow check and train as before.
  const float later = training.step(true);
  REQUIRE(std::isfinite(later));
  REQUIRE(later < first);
}

NN_DEVICE_TEST_CASE("copies from and to the host keep every value", "[synchronization]") {
  // 9 MB and a float, first sent in parts of 1 MB: on a CUDA device, copies through its four
  // 2 MB staging slots that reuse slots perhaps still being read; read back in rounds of four
  // slots. Then sent whole, for which the slots grow (Note [Staged host copies]). This case runs
  // before any other of this file that copies more than 2 MB from the host.
  const int64_t n = (9 << 18) + 1, part = 1 << 18;
  const Tensor host = nn::test::randomTensor({n}, 4);
  Tensor onDevice = Tensor::zeros({n}, kind.compared());
  for (int64_t at = 0; at < n; at += part) {
    const int64_t length = std::min(part, n - at);
    onDevice.narrow(0, at, length).copy_(host.narrow(0, at, length));
  }
  REQUIRE(onDevice.toVector() == host.toVector());
  REQUIRE(host.to(kind.compared()).toVector() == host.toVector());
  Tensor small = Tensor::zeros({64}, kind.compared());
  const Tensor values = nn::test::randomTensor({64}, 5);
  for (int i = 0; i < 2; ++i) {
    small.copy_(values);
    REQUIRE(small.toVector() == values.toVector());
  }
}

NN_DEVICE_TEST_CASE("a small copy from the host waits for nothing, a copy to the host once", "[synchronization]") {
  if (kind.isCpu()) NN_SKIP(kHostDevices);
  nn::Backend& backend = nn::backendOf(kind.device());
  // Steady, a small copy from the host waits for nothing (its slot was read long ago), a copy to
  // the host waits once.
  Tensor small = Tensor::zeros({64}, kind.compared());
  const Tensor values = nn::test::randomTensor({64}, 5);
  small.copy_(values);
  REQUIRE(small.toVector() == values.toVector());
  const int64_t before = backend.hostSynchronizations();
  small.copy_(values);
  REQUIRE(backend.hostSynchronizations() == before);
  REQUIRE(small.toVector() == values.toVector());
  REQUIRE(backend.hostSynchronizations() == before + 1);
}

NN_DEVICE_TEST_CASE("a failed value check names the first bad value and is reported once", "[synchronization]") {
  nn::Backend& backend = nn::backendOf(kind.device());
  const Tensor bad = kind.on(Tensor::fromVector({5}, {0, 1, 7, 2, 9}));
  // On the host checkValues throws; on a CUDA device the next wait (the read) does. Position 2 is
  // the first bad value, though position 4 is one too.
  REQUIRE_THROWS_WITH(
      [&] {
        backend.checkValues(
            kind.device(), bad.rawData(), bad.numel(), {nn::math::ValueKind::Index, 5},
            [] { return std::string("nn.LookupTable"); }, bad.sizes());
        return bad.toVector();
      }(),
      Catch::StartsWith("nn.LookupTable: expected indices from 0 to 4, got 7 at position 2 of [5]"));
  REQUIRE_NOTHROW(bad.toVector());
}

namespace {

// A batch of 64 x 3 x 224 x 224 (38.5 MB) from the host, through a DataParallelTable over
// `devices` (each replica's rows copied from the host to its device) and back, once to grow the
// staging slots to it, then six times: the copies wait for nothing, each slot being read long
// before it comes round again, and the host waits once per step, to read the result.
void requireLargeBatchWaitsOnlyForTheRead(const std::vector<nn::Device>& devices) {
  const Tensor batch = nn::test::randomTensor({64, 3, 224, 224}, 8);
  nn::DataParallelTable table(0);
  table.add(std::make_shared<nn::MulConstant>(0.5f), devices);
  nn::Backend& backend = nn::backendOf(devices[0]);
  table.forward(batch);
  const int64_t before = backend.hostSynchronizations();
  for (int i = 0; i < 6; ++i) table.forward(batch);
  REQUIRE(backend.hostSynchronizations() == before);
  const std::vector<float> out = table.output.toVector();
  REQUIRE(backend.hostSynchronizations() == before + 1);
  const std::vector<float> in = batch.toVector();
  REQUIRE(out.size() == in.size());
  for (size_t i = 0; i < in.size(); i += 4099) REQUIRE(out[i] == in[i] * 0.5f);
}

}  // namespace

NN_DEVICE_TEST_CASE("a batch larger than the staging slots waits for nothing once they have grown to it",
                    "[synchronization]") {
  if (kind.isCpu()) NN_SKIP(kHostDevices);
  requireLargeBatchWaitsOnlyForTheRead(kind.devices(1));
}

NN_MULTI_DEVICE_TEST_CASE("a large batch split over two devices waits for nothing once their slots have grown",
                          "[synchronization]") {
  if (kind.isCpu()) NN_SKIP(kHostDevices);
  requireLargeBatchWaitsOnlyForTheRead(kind.devices(2));
}
