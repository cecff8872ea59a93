// DataParallelTable as a module, each body on every device type (tests/support/DeviceTest.h): stale
// replicas, errors of replicas and callers, threads, printing, cloning, moving, saving and loading.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "nn/backend/Communicator.h"
#include "nn/core/GradientObserver.h"
#include "nn/nn.h"
#include "nn/parallel/DataParallelSteps.h"
#include "nn/parallel/DataParallelTable.h"
#include "nn/parallel/DeviceThreads.h"
#include "nn/parallel/LendDeviceThreads.h"
#include "tests/parallel/DataParallelHelpers.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/support/Profiling.h"
#include "tests/support/TempDir.h"

using nn::DataParallelTable;
using nn::Device;
using nn::Tensor;
using nn::test::batchInput;
using nn::test::bound;
using nn::test::DeviceKind;
using nn::test::filled;
using nn::test::iota;
using nn::test::makeNet;
using nn::test::profileRow;
using nn::test::ProfilingOn;
using nn::test::relDiff;
using nn::test::upTo;

NN_MULTI_DEVICE_TEST_CASE("stale replicas are explicit and refreshed before the next forward", "[DataParallelTable]") {
  const size_t n = static_cast<size_t>(upTo(kind, 3));
  auto table = std::make_shared<DataParallelTable>(0);
  table->add(makeNet(1), kind.devices(static_cast<int>(n)));
  const Tensor x = nn::test::randomTensor({6, 6}, 1);
  auto replicasMatch = [&] {
    for (size_t i = 1; i < n; ++i)
      if (relDiff(table->get(i)->getParameters().first, table->get(0)->getParameters().first) != 0) return false;
    return true;
  };
  auto noneStale = [&] {
    for (size_t i = 0; i < n; ++i)
      if (table->isStale(i)) return false;
    return true;
  };
  auto othersStale = [&] {
    for (size_t i = 1; i < n; ++i)
      if (!table->isStale(i)) return false;
    return !table->isStale(0);
  };
  REQUIRE(noneStale());
  table->forward(x);
  REQUIRE(noneStale());

  SECTION("backward marks them stale; the optimizer's write is seen") {
    table->backward(x, nn::test::randomTensor({6, 3}, 2));
    REQUIRE(othersStale());
    table->updateParameters(0.5f);
    REQUIRE_FALSE(replicasMatch());
  }
  SECTION("updateParameters") {
    table->get(0)->getParameters().second.fill_(1);
    table->updateParameters(0.5f);
    REQUIRE(othersStale());
  }
  SECTION("direct writes through getParameters") {
    table->getParameters().first.fill_(0.25f);
    REQUIRE(othersStale());
    REQUIRE_FALSE(replicasMatch());
  }
  SECTION("apply") {
    table->apply([](nn::Module& m) {
      if (auto* linear = dynamic_cast<nn::Linear*>(&m)) linear->weight.fill_(-1);
    });
    REQUIRE(othersStale());
  }
  SECTION("syncParameters refreshes at once") {
    table->getParameters().first.fill_(3);
    table->syncParameters();
    REQUIRE(noneStale());
    REQUIRE(replicasMatch());
  }
  table->forward(x);
  REQUIRE(noneStale());
  REQUIRE(replicasMatch());
}

NN_MULTI_DEVICE_TEST_CASE("a batch smaller than the device count uses the first devices", "[DataParallelTable]") {
  const int n = upTo(kind, 4);
  auto plain = makeNet(2);
  auto table = std::make_shared<DataParallelTable>(0);
  table->add(makeNet(2), kind.devices(n));
  const Tensor x = nn::test::randomTensor({n - 1, 6}, 3);
  REQUIRE(relDiff(table->forward(x), plain->forward(x)) < bound(kind, 1e-6));
  REQUIRE(table->get(static_cast<size_t>(n - 2))->output.size(0) == 1);
  REQUIRE(table->get(static_cast<size_t>(n - 1))->output.numel() == 0);  // never ran
}

NN_MULTI_DEVICE_TEST_CASE("add rejects empty, repeated and missing devices", "[DataParallelTable]") {
  auto table = std::make_shared<DataParallelTable>(0);
  const Device missing = kind.device(kind.available());
  REQUIRE_THROWS_WITH(table->add(makeNet(1), {}), Catch::Contains("at least one device"));
  REQUIRE_THROWS_WITH(table->add(makeNet(1), {kind.device(0), kind.device(1), kind.device(0)}),
                      Catch::Contains(kind.device(0).str()) && Catch::Contains("twice"));
  REQUIRE_THROWS_WITH(table->add(makeNet(1), {kind.device(0), missing}),
                      Catch::Contains(missing.str()) && Catch::Contains("does not exist"));
  REQUIRE_THROWS_WITH(table->forward(Tensor::zeros({2, 6})), Catch::Contains("add("));
}

namespace {

// Throws from forward on one chosen device while `armed`.
class FailOn : public nn::Module {
 public:
  FailOn(Device where, std::shared_ptr<std::atomic<bool>> armed) : where_(where), armed_(std::move(armed)) {}
  const Tensor& updateOutput(const Tensor& input) override {
    NN_CHECK(!(*armed_ && input.device() == where_), "FailOn: planted failure");
    output.set_(input);
    return output;
  }
  const Tensor& updateGradInput(const Tensor&, const Tensor& gradOutput) override {
    gradInput.set_(gradOutput);
    return gradInput;
  }
  std::string typeName() const override { return "test.FailOn"; }

 private:
  Device where_;
  std::shared_ptr<std::atomic<bool>> armed_;
};

}  // namespace

NN_MULTI_DEVICE_TEST_CASE("a replica's exception reaches the caller with its device, and the table stays usable",
                          "[DataParallelTable]") {
  const int n = upTo(kind, 3);
  auto armed = std::make_shared<std::atomic<bool>>(true);
  auto net = makeNet(4);
  net->add(std::make_shared<FailOn>(kind.device(1), armed));
  const Device where = kind.device(1);
  nn::registerModuleType("test.FailOn", [armed, where](const nn::Config&, std::vector<nn::ModulePtr>) {
    return std::make_shared<FailOn>(where, armed);
  });
  auto table = std::make_shared<DataParallelTable>(0);
  table->add(net, kind.devices(n));
  const Tensor x = nn::test::randomTensor({9, 6}, 3);
  for (int attempt = 0; attempt < 20; ++attempt)
    REQUIRE_THROWS_WITH(table->forward(x), Catch::Contains(kind.device(1).str()) &&
                                               Catch::Contains("planted failure") &&
                                               Catch::Contains("nn.DataParallelTable"));
  *armed = false;
  auto plain = makeNet(4);
  REQUIRE(relDiff(table->forward(x), plain->forward(x)) < bound(kind, 1e-6));
}

NN_MULTI_DEVICE_TEST_CASE("threads() runs once on each device's own thread, the caller's for the first CPU device",
                          "[DataParallelTable]") {
  const int n = upTo(kind, 3);
  auto table = std::make_shared<DataParallelTable>(0);
  table->add(makeNet(1), kind.devices(n));
  std::mutex m;
  std::vector<std::pair<std::string, std::thread::id>> calls;
  table->threads([&](const Device& d) {
    std::lock_guard<std::mutex> lock(m);
    calls.emplace_back(d.str(), std::this_thread::get_id());
  });
  REQUIRE(calls.size() == static_cast<size_t>(n));
  std::set<std::string> devices, expected;
  std::set<std::thread::id> ids;
  for (auto& [d, id] : calls) devices.insert(d), ids.insert(id);
  for (int i = 0; i < n; ++i) expected.insert(kind.device(i).str());
  REQUIRE(devices == expected);
  REQUIRE(ids.size() == static_cast<size_t>(n));
  // CPU devices: the caller runs the first device's tasks (Note [The caller as the first
  // device]); a CUDA device has a thread of its own, with the device current.
  for (auto& [d, id] : calls)
    CHECK((id == std::this_thread::get_id()) == (kind.type() == nn::DeviceType::CPU && d == kind.device(0).str()));
}

// Counts the modules a backward reports done on the thread that installed it.
struct CountingObserver : nn::GradientObserver {
  std::vector<const nn::Module*> told;
  void gradientsDone(const nn::Module& module) override { told.push_back(&module); }
};

NN_MULTI_DEVICE_TEST_CASE("the caller's gradient observer is told of no replica's modules", "[DataParallelTable]") {
  // DistributedDataParallelTable starts summing a module's gradients when it is told they are
  // done; a replica's are done only once the table has reduced them, also where the first
  // replica runs on the caller's thread.
  auto table = std::make_shared<DataParallelTable>(0);
  table->add(makeNet(5), kind.devices(2));
  const Tensor x = kind.on(nn::test::randomTensor({4, 6}, 8));
  const Tensor& y = table->forward(x);
  const Tensor gradOutput = kind.on(nn::test::randomTensor(y.sizes(), 9));
  CountingObserver observer;
  {
    nn::ScopedGradientObserver scope(&observer);
    table->zeroGradParameters();
    table->backward(x, gradOutput);
    table->accGradParameters(x, gradOutput, 1.f);
  }
  CHECK(observer.told.empty());
  // The same observer around a plain copy of the network is told of its modules: the check can fail.
  auto plain = makeNet(5);
  plain->to(kind.device(0));
  plain->forward(x);
  observer.told.clear();
  {
    nn::ScopedGradientObserver scope(&observer);
    plain->backward(x, gradOutput);
  }
  CHECK(observer.told.size() == plain->size());
}

NN_MULTI_DEVICE_TEST_CASE("LendDeviceThreads runs the caller's kernels on the first device over the device threads",
                          "[DataParallelTable]") {
  const int n = upTo(kind, 3);
  auto table = std::make_shared<DataParallelTable>(0);
  table->add(makeNet(3), kind.devices(n));
  const Device first = kind.device(0);
  // CPU devices lend their threads; a CUDA device's kernels are not cut into parts on the host.
  const int lent = kind.isCpu() && n > 1 ? n : 1;
  // An SGD step on parameters long enough for a part per thread, of an odd length; its twin
  // steps without lent threads, the same floats expected.
  const int64_t length = 3 * 65536 + 7;
  const Tensor values = kind.on(nn::test::randomTensor({length}, 4));
  const Tensor gradients = kind.on(nn::test::randomTensor({length}, 5));
  const Tensor twinValues = values.clone(), twinGradients = gradients.clone();
  nn::SgdOptions options;
  options.learningRate = 0.1f;
  options.momentum = 0.9f;
  options.weightDecay = 1e-3f;
  nn::SGD sgd({values, gradients}, options), twin({twinValues, twinGradients}, options);
  const Tensor x = kind.on(nn::test::randomTensor({5, 6}, 6));
  const Tensor expected = table->forward(x).clone();
  const int64_t before = table->deviceRounds();
  std::vector<std::thread::id> threadOf(static_cast<size_t>(n));
  {
    nn::LendDeviceThreads lend(*table);
    REQUIRE(nn::parallelParts(first, length) == lent);
    CHECK(nn::parallelParts(kind.device(n - 1), length) == (n > 1 ? 1 : lent));
    nn::parallelFor(first, lent, [&](int p) { threadOf[static_cast<size_t>(p)] = std::this_thread::get_id(); });
    CHECK(table->deviceRounds() == before + (lent > 1 ? 1 : 0));
    for (int step = 0; step < 2; ++step) sgd.step();
    // A call of the table inside the scope: its rounds as without it, the same output.
    CHECK(relDiff(table->forward(x), expected) == 0);
    table->zeroGradParameters();
  }
  for (int step = 0; step < 2; ++step) twin.step();
  CHECK(relDiff(values, twinValues) == 0);
  CHECK(nn::parallelParts(first, length) == 1);
  // Part 0 on the caller's thread, each other part on a device's thread of its own.
  CHECK(threadOf[0] == std::this_thread::get_id());
  CHECK(std::set<std::thread::id>(threadOf.begin(), threadOf.begin() + lent).size() == static_cast<size_t>(lent));
  // Where threads were lent, the parts above, the velocity's zeros and each step took a round:
  // the route ran. The forward took its own, and the zeroing of the small net's gradients none
  // (one part).
  CHECK(table->deviceRounds() - before == (lent > 1 ? 1 + 1 + 2 : 0) + 1);
}

NN_MULTI_DEVICE_TEST_CASE("zeroGradParameters and updateParameters cut their work over the device threads",
                          "[DataParallelTable]") {
  const int n = upTo(kind, 2);
  auto table = std::make_shared<DataParallelTable>(0);
  // 160,400 parameters: the fill and the weight's update each take two parts where threads lend.
  table->add(std::make_shared<nn::Linear>(400, 400), kind.devices(n));
  auto twin = std::make_shared<nn::Linear>(400, 400);
  twin->to(kind.device(0));
  twin->getParameters().first.copy_(table->getParameters().first);
  const Tensor x = kind.on(nn::test::randomTensor({4, 400}, 7));
  const Tensor gradOutput = kind.on(nn::test::randomTensor({4, 400}, 8));
  table->forward(x);
  table->backward(x, gradOutput);
  // The same gradients (the table's sum of its replicas' rounds otherwise than one device's).
  twin->getParameters().second.copy_(table->getParameters().second);
  const int lent = kind.isCpu() && n > 1 ? 1 : 0;
  int64_t before = table->deviceRounds();
  table->updateParameters(0.1f);
  twin->updateParameters(0.1f);
  CHECK(table->deviceRounds() - before == lent);
  CHECK(relDiff(table->getParameters().first, twin->getParameters().first) == 0);
  before = table->deviceRounds();
  table->zeroGradParameters();
  CHECK(table->deviceRounds() - before == lent);
  const std::vector<float> gradients = table->getParameters().second.toVector();
  CHECK(std::all_of(gradients.begin(), gradients.end(), [](float g) { return g == 0.f; }));
  const std::vector<float> twinGradients = twin->getParameters().second.toVector();  // the check can fail
  CHECK(std::any_of(twinGradients.begin(), twinGradients.end(), [](float g) { return g != 0.f; }));
}

NN_MULTI_DEVICE_TEST_CASE("DataParallelTable is a module: in a Sequential, printed, cloned", "[DataParallelTable]") {
  auto table = std::make_shared<DataParallelTable>(0, true, false);
  table->add(makeNet(6), kind.devices(2));
  auto outer = std::make_shared<nn::Sequential>();
  outer->add(table);
  outer->add(std::make_shared<nn::ReLU>());
  const Tensor x = nn::test::randomTensor({5, 6}, 3);
  auto plain = makeNet(6);
  REQUIRE(relDiff(outer->forward(x), nn::ReLU().forward(plain->forward(x))) < bound(kind, 1e-6));
  const std::string header = "nn.DataParallelTable(dim 0, " + kind.device(0).str() + ", " + kind.device(1).str() +
                             ") {\n  (1): nn.Sequential {";
  REQUIRE(table->toString().rfind(header, 0) == 0);
  REQUIRE(table->get(1)->device() == kind.device(1));
  auto copy = std::dynamic_pointer_cast<DataParallelTable>(table->clone());
  REQUIRE(copy != nullptr);
  REQUIRE(copy->replicaCount() == 2);
  REQUIRE(relDiff(copy->forward(x), table->forward(x)) == 0);
  copy->getParameters().first.fill_(0);
  REQUIRE(relDiff(table->forward(x), plain->forward(x)) < bound(kind, 1e-6));
  // Names in the state dict are the plain module's, so a checkpoint loads either way.
  std::vector<std::string> names;
  for (auto& t : table->stateDict()) names.push_back(t.name);
  REQUIRE(names == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
}

namespace {

std::shared_ptr<nn::Sequential> makeBatchNormNet(uint64_t seed) {
  nn::manualSeed(seed);
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Linear>(6, 4));
  net->add(std::make_shared<nn::BatchNormalization>(4));
  net->add(std::make_shared<nn::Linear>(4, 3));
  return net;
}

std::vector<float> runningMean(const nn::ModulePtr& replica) {
  auto bn =
      std::dynamic_pointer_cast<nn::BatchNormalization>(std::dynamic_pointer_cast<nn::Sequential>(replica)->get(1));
  return bn->runningMean.toVector();
}

}  // namespace

NN_MULTI_DEVICE_TEST_CASE("buffers: the first replica's are broadcast by default, averaged on request",
                          "[DataParallelTable]") {
  const Tensor x = nn::test::randomTensor({8, 6}, 4);
  const Tensor g = nn::test::randomTensor({8, 3}, 5);
  SECTION("broadcast of the first replica's buffers") {
    auto table = std::make_shared<DataParallelTable>(0);
    table->add(makeBatchNormNet(1), kind.devices(2));
    table->forward(x);
    // Each replica saw its own half of the batch, so their running means differ now.
    const std::vector<float> first = runningMean(table->get(0));
    REQUIRE(first != runningMean(table->get(1)));
    table->backward(x, g);
    table->syncParameters();
    REQUIRE(runningMean(table->get(1)) == first);
  }
  SECTION("average across replicas") {
    auto table = std::make_shared<DataParallelTable>(0);
    table->setBufferPolicy(DataParallelTable::BufferPolicy::Average);
    table->add(makeBatchNormNet(1), kind.devices(2));
    table->forward(x);
    const std::vector<float> a = runningMean(table->get(0)), b = runningMean(table->get(1));
    table->backward(x, g);
    table->syncParameters();
    for (int r = 0; r < 2; ++r) {
      const std::vector<float> m = runningMean(table->get(static_cast<size_t>(r)));
      // One float sum, then one product by 1/2: exact in float32, on any device.
      for (size_t i = 0; i < m.size(); ++i) REQUIRE(m[i] == (a[i] + b[i]) * 0.5f);
    }
  }
}

NN_MULTI_DEVICE_TEST_CASE("a table saved on N devices loads on M devices or as a plain module", "[DataParallelTable]") {
  nn::test::TempDir dir;
  const std::string path = dir.file("table.safetensors");
  const Tensor x = nn::test::randomTensor({7, 6}, 8);
  auto table = std::make_shared<DataParallelTable>(0, true, false);
  table->add(makeBatchNormNet(3), kind.devices(2));
  table->forward(x);
  table->backward(x, nn::test::randomTensor({7, 3}, 9));
  table->updateParameters(0.1f);
  table->evaluate();
  const std::vector<float> expected = table->forward(x).toVector();
  nn::save(*table, path);

  // As saved: a table on the same devices.
  auto loaded = std::dynamic_pointer_cast<DataParallelTable>(nn::load(path));
  REQUIRE(loaded != nullptr);
  REQUIRE(loaded->devices() == kind.devices(2));
  REQUIRE_FALSE(loaded->isTraining());
  REQUIRE(nn::test::maxAbsDiff(loaded->forward(x), expected) < 1e-6);

  // Onto three devices (one where there are only two): the state dict names are the plain
  // module's.
  const int m = kind.available() >= 3 ? 3 : 1;
  auto other = std::make_shared<DataParallelTable>(0, true, false);
  other->add(makeBatchNormNet(99), kind.devices(m));
  other->forward(x);
  nn::loadStateInto(*other, path);
  if (m > 1) REQUIRE(other->isStale(static_cast<size_t>(m - 1)));
  other->evaluate();
  REQUIRE(nn::test::maxAbsDiff(other->forward(x), expected) < bound(kind, 1e-6));
  REQUIRE(nn::test::maxAbsDiff(other->get(static_cast<size_t>(m - 1))->getParameters().first,
                               table->getParameters().first) == 0);

  // As a plain module on the host.
  auto plain = makeBatchNormNet(42);
  nn::loadStateInto(*plain, path);
  plain->evaluate();
  REQUIRE(nn::test::maxAbsDiff(plain->forward(x), expected) < bound(kind, 1e-6));

  // The plain module out of the loaded table without rebuilding it (README, "Saving"): the
  // first replica, on the first device, which outlives the table.
  const nn::ModulePtr first = std::dynamic_pointer_cast<DataParallelTable>(nn::load(path))->get(0);
  REQUIRE(first->typeName() == "nn.Sequential");
  REQUIRE(first->device() == kind.devices(2)[0]);
  first->evaluate();
  REQUIRE(nn::test::maxAbsDiff(first->forward(x.to(first->device())), expected) < bound(kind, 1e-6));
  first->to(Device::cpu(1));
  REQUIRE(nn::test::maxAbsDiff(first->forward(x.to(Device::cpu(1))), expected) < bound(kind, 1e-6));
}

namespace {

// Throws in forward, updateGradInput or accGradParameters on one device, as told.
struct Fault {
  std::atomic<int> pass{0};  // 0: none, 1: forward, 2: updateGradInput, 3: accGradParameters
  std::atomic<int> device{0};
};

class FaultyLinear : public nn::Linear {
 public:
  FaultyLinear(std::shared_ptr<Fault> fault) : nn::Linear(8, 3), fault_(std::move(fault)) {}
  const Tensor& updateOutput(const Tensor& input) override {
    trip(1, input);
    return nn::Linear::updateOutput(input);
  }
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override {
    trip(2, input);
    return nn::Linear::updateGradInput(input, gradOutput);
  }
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override {
    trip(3, input);
    nn::Linear::accGradParameters(input, gradOutput, scale);
  }
  std::string typeName() const override { return "test.FaultyLinear"; }
  nn::Config config() const override { return nn::Config(); }

 private:
  void trip(int pass, const Tensor& input) const {
    NN_CHECK(!(fault_->pass == pass && input.device().index() == fault_->device), "planted fault in pass " << pass);
  }
  std::shared_ptr<Fault> fault_;
};

}  // namespace

NN_MULTI_DEVICE_TEST_CASE("replicas failing again and again never hang a thread or leave a replica stale",
                          "[DataParallelTable]") {
  const int n = upTo(kind, 3);
  auto fault = std::make_shared<Fault>();
  nn::registerModuleType("test.FaultyLinear", [fault](const nn::Config&, std::vector<nn::ModulePtr>) {
    return std::make_shared<FaultyLinear>(fault);
  });
  auto build = [&] {
    nn::manualSeed(21);
    auto net = std::make_shared<nn::Sequential>();
    net->add(std::make_shared<nn::Linear>(6, 8));
    net->add(std::make_shared<nn::Tanh>());
    net->add(std::make_shared<FaultyLinear>(fault));
    return net;
  };
  auto plain = build();
  auto table = std::make_shared<DataParallelTable>(0);
  table->add(build(), kind.devices(n));
  nn::Generator g(5);
  int failures = 0;
  for (int step = 0; step < 200; ++step) {
    fault->pass = static_cast<int>(g.below(4));  // a quarter of the steps run clean
    fault->device = static_cast<int>(g.below(static_cast<uint64_t>(n)));
    const Tensor x = nn::test::randomTensor({9, 6}, 300 + static_cast<uint64_t>(step));
    const Tensor gradOut = nn::test::randomTensor({9, 3}, 600 + static_cast<uint64_t>(step));
    try {
      table->zeroGradParameters();
      table->forward(x);
      table->backward(x, gradOut);
      table->updateParameters(0.05f);
    } catch (const nn::Error& e) {
      ++failures;
      REQUIRE(std::string(e.what()).find("planted fault") != std::string::npos);
      REQUIRE(std::string(e.what()).find(kind.device(fault->device.load()).str()) != std::string::npos);
      continue;  // the plain module skips the step too
    }
    plain->zeroGradParameters();
    plain->forward(x);
    plain->backward(x, gradOut);
    plain->updateParameters(0.05f);
  }
  REQUIRE(failures > 100);
  fault->pass = 0;
  const Tensor x = nn::test::randomTensor({9, 6}, 1);
  REQUIRE(relDiff(table->forward(x), plain->forward(x)) < bound(kind, 1e-5));
  for (size_t r = 0; r < table->replicaCount(); ++r)
    REQUIRE(relDiff(table->get(r)->getParameters().first, plain->getParameters().first) < bound(kind, 1e-5));
}

NN_MULTI_DEVICE_TEST_CASE(
    "moving a tree that holds a table is refused before anything moves, but to the first "
    "replica's device",
    "[DataParallelTable]") {
  auto table = std::make_shared<DataParallelTable>(0, true, false);
  table->add(makeNet(5), kind.devices(2));
  nn::manualSeed(6);
  auto before = std::make_shared<nn::Linear>(6, 6);  // moved ahead of the table, were anything moved
  auto plain = std::make_shared<nn::Sequential>();
  plain->add(before->clone());
  plain->add(makeNet(5));
  before->to(kind.device(1));
  auto outer = std::make_shared<nn::Sequential>();
  outer->add(before);
  outer->add(table);
  const Tensor x = nn::test::randomTensor({5, 6}, 3);

  const std::string name = "nn.DataParallelTable(dim 0, " + kind.device(0).str() + ", " + kind.device(1).str() + ")";
  REQUIRE_THROWS_WITH(outer->to(kind.device(1)), Catch::Contains(name) && Catch::Contains(kind.device(1).str()));
  if (kind.available() > 2)
    REQUIRE_THROWS_WITH(table->to(kind.device(2)), Catch::Contains(name) && Catch::Contains(kind.device(2).str()));
  REQUIRE(before->weight.device() == kind.device(1));
  REQUIRE(table->get(0)->device() == kind.device(0));
  REQUIRE(table->get(1)->device() == kind.device(1));

  // The first replica's device: the rest of the tree may go there, and the table stays whole.
  outer->to(kind.device(0));
  REQUIRE(before->weight.device() == kind.device(0));
  REQUIRE(table->get(1)->device() == kind.device(1));
  REQUIRE(relDiff(outer->forward(kind.on(x)), plain->forward(x)) < bound(kind, 1e-6));
}

NN_MULTI_DEVICE_TEST_CASE("two threads calling forward on one table at once get an error, never a wrong table",
                          "[DataParallelTable]") {
  // Note [One call at a time]: of two overlapping calls one is refused with an nn::Error
  // that says so. Over many rounds started together some overlap; afterwards the table still
  // computes what it computed before. Results are recorded on the threads and checked here.
  auto table = std::make_shared<DataParallelTable>(0);
  table->add(makeNet(4), kind.devices(2));
  const Tensor x = kind.on(nn::test::randomTensor({64, 6}, 7));
  const std::vector<float> reference = table->forward(x).toVector();
  std::atomic<int> refused{0}, otherErrors{0}, started{0};
  std::string otherMessage;
  std::mutex messageMutex;
  for (int round = 0; round < 300; ++round) {
    started = 0;
    auto call = [&] {
      ++started;
      while (started < 2) std::this_thread::yield();
      try {
        table->forward(x);
      } catch (const nn::Error& e) {
        if (std::string(e.what()).find("called while another call on this table runs") != std::string::npos) {
          ++refused;
        } else {
          ++otherErrors;
          std::lock_guard<std::mutex> lock(messageMutex);
          otherMessage = e.what();
        }
      }
    };
    std::thread a(call), b(call);
    a.join();
    b.join();
  }
  INFO(otherMessage);
  CHECK(otherErrors == 0);
  CHECK(refused > 0);
  CHECK(table->forward(x).toVector() == reference);
}

NN_MULTI_DEVICE_TEST_CASE("forward inside threads()'s init function is refused, not a deadlock",
                          "[DataParallelTable]") {
  auto table = std::make_shared<DataParallelTable>(0);
  table->add(makeNet(4), kind.devices(2));
  const Tensor x = kind.on(nn::test::randomTensor({4, 6}, 7));
  REQUIRE_THROWS_WITH(
      table->threads([&](const Device&) { table->forward(x); }),
      Catch::Contains("forward called while another call on this table runs") && Catch::Contains(kind.device(0).str()));
  // The table is usable afterwards.
  CHECK(table->forward(x).sizes() == std::vector<int64_t>{4, 3});
}

TEST_CASE("DataParallelTable names its first replica's parameters and buffers", "[DataParallelTable]") {
  nn::manualSeed(3);
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Linear>(4, 3));
  net->add(std::make_shared<nn::BatchNormalization>(3));
  auto table = std::make_shared<DataParallelTable>(0, true, false);
  table->add(net, {Device::cpu(0), Device::cpu(1)});
  const std::vector<nn::NamedParameter> parameters = table->namedParameters();
  std::vector<std::string> names;
  for (const nn::NamedParameter& p : parameters) names.push_back(p.name);
  REQUIRE(names == std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias"});
  CHECK(parameters[0].value.data() == dynamic_cast<nn::Linear&>(*net->get(0)).weight.data());
  CHECK(parameters[0].gradient.data() == dynamic_cast<nn::Linear&>(*net->get(0)).gradWeight.data());
  names.clear();
  for (const nn::NamedTensor& b : table->namedBuffers()) names.push_back(b.name);
  CHECK(names == std::vector<std::string>{"1.running_mean", "1.running_var"});
}

TEST_CASE("a saved table whose bufferPolicy is neither 0 nor 1 is refused when loaded, not read as 0",
          "[DataParallelTable]") {
  nn::test::TempDir dir;
  const std::string path = dir.file("table.safetensors");
  auto table = std::make_shared<DataParallelTable>(0, true, false);
  table->add(makeNet(4), {Device::cpu(0), Device::cpu(1)});
  table->setBufferPolicy(nn::BufferPolicy::Average);
  nn::save(*table, path);
  const nn::SafetensorsContents saved = nn::readSafetensors(path);
  const std::string tree = saved.metadata.at("nn.module");
  const std::string policy = "\"bufferPolicy\":1";
  REQUIRE(tree.find(policy) != std::string::npos);
  CHECK(std::dynamic_pointer_cast<DataParallelTable>(nn::load(path))->bufferPolicy() == nn::BufferPolicy::Average);
  // 7 and -1 loaded as BroadcastFirst, and were saved back as 0.
  for (const std::string value : {"7", "-1"}) {
    CAPTURE(value);
    nn::Metadata metadata = saved.metadata;
    metadata["nn.module"] = std::string(tree).replace(tree.find(policy), policy.size(), "\"bufferPolicy\":" + value);
    nn::writeSafetensors(path, saved.tensors, metadata);
    CHECK_THROWS_WITH(nn::load(path), Catch::Contains(path) &&
                                          Catch::Contains("nn.DataParallelTable: expected bufferPolicy 0") &&
                                          Catch::Contains("got " + value));
  }
}

TEST_CASE("a table's options are its arguments: its config and toString come from them, typed", "[DataParallelTable]") {
  DataParallelTable::Options options;
  options.dim = 1;
  options.flattenParams = false;
  options.useNCCL = false;
  options.bufferPolicy = nn::BufferPolicy::Average;
  DataParallelTable table(options);
  CHECK(table.toString() == "nn.DataParallelTable(dim 1)");
  // Saved as files have always held them: the policy as 0 or 1, the devices as one text.
  CHECK(table.config().values() == nn::Config()
                                       .set("dim", 1)
                                       .set("flattenParams", false)
                                       .set("useNCCL", false)
                                       .set("bufferPolicy", 1)
                                       .set("devices", "")
                                       .values());
  table.add(makeNet(4), {Device::cpu(1), Device::cpu(0)});
  CHECK(table.options().devices == std::vector<Device>{Device::cpu(1), Device::cpu(0)});
  CHECK(table.toString().rfind("nn.DataParallelTable(dim 1, cpu:1, cpu:0) {\n", 0) == 0);
  auto copy = std::dynamic_pointer_cast<DataParallelTable>(table.clone());
  REQUIRE(copy);
  CHECK(copy->config().values() == table.config().values());
  CHECK(copy->bufferPolicy() == nn::BufferPolicy::Average);
  CHECK_FALSE(copy->options().flattenParams);
  // Torch7's arguments are the first three fields.
  const DataParallelTable::Options torch = DataParallelTable(2, false, true).options();
  CHECK(torch.dim == 2);
  CHECK_FALSE(torch.flattenParams);
  CHECK(torch.useNCCL);
  CHECK(torch.bufferPolicy == nn::BufferPolicy::BroadcastFirst);
  CHECK(torch.devices.empty());
  // The devices come with the module, in add().
  CHECK_THROWS_WITH(DataParallelTable(table.options()),
                    Catch::Contains("nn.DataParallelTable: expected options without devices, got 2"));
}
