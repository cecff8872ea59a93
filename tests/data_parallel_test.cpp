// DataParallelTable on logical CPU devices: the same numbers as one module on the whole
// batch, stale-replica bookkeeping, errors and threads.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <set>
#include <thread>

#include "cunn/cunn.h"
#include "tests/DeviceTest.h"
#include "tests/GradCheck.h"
#include "tests/TempDir.h"

using nn::DataParallelTable;
using nn::Device;
using nn::Tensor;

namespace {

std::shared_ptr<nn::Sequential> makeNet(uint64_t seed) {
  nn::manualSeed(seed);
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Linear>(6, 8));
  net->add(std::make_shared<nn::ReLU>());
  net->add(std::make_shared<nn::Linear>(8, 3));
  return net;
}

std::vector<Device> cpus(int n) {
  std::vector<Device> d;
  for (int i = 0; i < n; ++i) d.push_back(Device::cpu(i));
  return d;
}

// Largest difference relative to max(1, |value|), so the bound reads as float tolerance.
double relDiff(const Tensor& a, const Tensor& b) {
  const auto x = a.toVector(), y = b.toVector();
  if (x.size() != y.size()) return 1e30;
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, std::fabs(double(x[i]) - y[i]) / std::max(1.0, std::fabs(double(y[i]))));
  return worst;
}

// Input whose dimension `dim` is the batch: [batch, 6] for dim 0, [2, batch, 6] for dim 1.
Tensor batchInput(int dim, int64_t batch, uint64_t seed) {
  return dim == 0 ? nn::test::randomTensor({batch, 6}, seed) : nn::test::randomTensor({2, batch, 6}, seed);
}

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

TEST_CASE("DataParallelTable equals the plain module on the whole batch", "[DataParallelTable]") {
  for (int dim : {0, 1})
    for (bool flatten : {true, false})
      for (int devices : {1, 2, 3, 4})
        for (int64_t batch : {1, 9, 15, 64}) {
          CAPTURE(dim, flatten, devices, batch);
          auto plain = makeNet(7);
          auto table = std::make_shared<DataParallelTable>(dim, flatten, false);
          table->add(makeNet(7), cpus(devices));
          const Tensor x = batchInput(dim, batch, 100 + batch);

          const Tensor& expected = plain->forward(x);
          const Tensor& out = table->forward(x);
          REQUIRE(out.device() == Device::cpu(0));
          REQUIRE(out.sizes() == expected.sizes());
          REQUIRE(relDiff(out, expected) < 1e-6);

          const Tensor g = nn::test::randomTensor(expected.sizes(), 5);
          plain->zeroGradParameters();
          table->zeroGradParameters();
          // Two backward calls: gradients accumulate the same way on both.
          for (int pass = 0; pass < 2; ++pass) {
            plain->backward(x, g);
            table->backward(x, g);
          }
          REQUIRE(relDiff(table->gradInput, plain->gradInput) < 1e-6);
          auto [pv, pg] = plain->parameters();
          auto [tv, tg] = table->parameters();
          REQUIRE(tg.size() == pg.size());
          for (size_t i = 0; i < pg.size(); ++i) REQUIRE(relDiff(tg[i], pg[i]) < 1e-5);
        }
}

TEST_CASE("gradients stay exact over steps whose batches use different numbers of devices", "[DataParallelTable]") {
  // After a reduce the other replicas' gradients are already counted in the first's (Note
  // [Counted gradients]); each later step must still add exactly its own batch, whether a
  // replica sat out the step before (batch 2 on 4 devices) or not.
  auto plain = makeNet(7);
  auto table = std::make_shared<DataParallelTable>(0, true, false);
  table->add(makeNet(7), cpus(4));
  uint64_t seed = 300;
  for (int64_t batch : {9, 2, 9, 1, 15}) {
    CAPTURE(batch);
    const Tensor x = batchInput(0, batch, ++seed);
    const Tensor g = nn::test::randomTensor({batch, 3}, ++seed);
    plain->zeroGradParameters();
    table->zeroGradParameters();
    auto [tv, tg] = table->parameters();
    for (const Tensor& t : tg)
      for (float v : t.toVector()) REQUIRE(v == 0.f);
    plain->forward(x);
    table->forward(x);
    plain->backward(x, g);
    table->backward(x, g);
    auto [pv, pg] = plain->parameters();
    for (size_t i = 0; i < pg.size(); ++i) REQUIRE(relDiff(tg[i], pg[i]) < 1e-5);
  }
}

TEST_CASE("10 SGD steps with momentum give the plain module's parameters", "[DataParallelTable]") {
  for (int64_t batch : {9, 15}) {
    CAPTURE(batch);
    auto plain = makeNet(3);
    auto table = std::make_shared<DataParallelTable>(0);
    table->add(makeNet(3), cpus(2));
    nn::SgdOptions options;
    options.learningRate = 0.1f;
    options.momentum = 0.9f;
    options.dampening = 0.f;
    options.weightDecay = 1e-3f;
    nn::SGD plainSgd(plain->getParameters(), options);
    nn::SGD tableSgd(table->getParameters(), options);
    const Tensor pw = plain->getParameters().first;
    const Tensor tw = table->getParameters().first;
    const Tensor initial = pw.clone();
    nn::ClassNLLCriterion criterion;
    for (int step = 0; step < 10; ++step) {
      const Tensor x = nn::test::randomTensor({batch, 6}, 1000 + step);
      std::vector<float> labels;
      for (int64_t i = 0; i < batch; ++i) labels.push_back(static_cast<float>((i * 7 + step) % 3));
      const Tensor y = Tensor::fromVector({batch}, labels);
      for (auto [module, sgd] : {std::pair<nn::Module*, nn::SGD*>{plain.get(), &plainSgd},
                                 std::pair<nn::Module*, nn::SGD*>{table.get(), &tableSgd}}) {
        module->zeroGradParameters();
        const Tensor& out = module->forward(x);
        criterion.forward(out, y);
        module->backward(x, criterion.backward(out, y));
        sgd->step();
      }
    }
    REQUIRE(relDiff(pw, initial) > 1e-2);  // training moved the parameters
    REQUIRE(relDiff(tw, pw) < 1e-5);
    // The other replica is refreshed before the next forward.
    const Tensor x = nn::test::randomTensor({batch, 6}, 5);
    REQUIRE(relDiff(table->forward(x), plain->forward(x)) < 1e-5);
    REQUIRE(relDiff(table->get(1)->getParameters().first, pw) < 1e-5);
  }
}

TEST_CASE("stale replicas are explicit and refreshed before the next forward", "[DataParallelTable]") {
  auto table = std::make_shared<DataParallelTable>(0);
  table->add(makeNet(1), cpus(3));
  const Tensor x = nn::test::randomTensor({6, 6}, 1);
  auto replicasMatch = [&] {
    for (size_t i = 1; i < table->replicaCount(); ++i)
      if (relDiff(table->get(i)->getParameters().first, table->get(0)->getParameters().first) != 0) return false;
    return true;
  };
  auto noneStale = [&] { return !table->isStale(0) && !table->isStale(1) && !table->isStale(2); };
  REQUIRE(noneStale());
  table->forward(x);
  REQUIRE(noneStale());

  SECTION("backward marks them stale; the optimizer's write is seen") {
    table->backward(x, nn::test::randomTensor({6, 3}, 2));
    REQUIRE(table->isStale(1));
    REQUIRE(table->isStale(2));
    REQUIRE_FALSE(table->isStale(0));
    table->updateParameters(0.5f);
    REQUIRE_FALSE(replicasMatch());
  }
  SECTION("updateParameters") {
    table->get(0)->getParameters().second.fill_(1);
    table->updateParameters(0.5f);
    REQUIRE(table->isStale(1));
  }
  SECTION("direct writes through getParameters") {
    table->getParameters().first.fill_(0.25f);
    REQUIRE(table->isStale(2));
    REQUIRE_FALSE(replicasMatch());
  }
  SECTION("apply") {
    table->apply([](nn::Module& m) {
      if (auto* linear = dynamic_cast<nn::Linear*>(&m)) linear->weight.fill_(-1);
    });
    REQUIRE(table->isStale(1));
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

TEST_CASE("a batch smaller than the device count uses the first devices", "[DataParallelTable]") {
  auto plain = makeNet(2);
  auto table = std::make_shared<DataParallelTable>(0);
  table->add(makeNet(2), cpus(4));
  const Tensor x = nn::test::randomTensor({2, 6}, 3);
  REQUIRE(relDiff(table->forward(x), plain->forward(x)) < 1e-6);
  REQUIRE(table->get(2)->output.numel() == 0);  // never ran
}

TEST_CASE("add rejects empty, repeated and missing devices", "[DataParallelTable]") {
  auto table = std::make_shared<DataParallelTable>(0);
  REQUIRE_THROWS_WITH(table->add(makeNet(1), {}), Catch::Contains("at least one device"));
  REQUIRE_THROWS_WITH(table->add(makeNet(1), {Device::cpu(0), Device::cpu(1), Device::cpu(0)}),
                      Catch::Contains("cpu:0") && Catch::Contains("twice"));
  REQUIRE_THROWS_WITH(table->add(makeNet(1), {Device::cpu(0), Device::cpu(70)}),
                      Catch::Contains("cpu:70") && Catch::Contains("does not exist"));
  REQUIRE_THROWS_WITH(table->forward(Tensor::zeros({2, 6})), Catch::Contains("add("));
}

TEST_CASE("a replica's exception reaches the caller with its device, and the table stays usable",
          "[DataParallelTable]") {
  auto armed = std::make_shared<std::atomic<bool>>(true);
  auto net = makeNet(4);
  net->add(std::make_shared<FailOn>(Device::cpu(1), armed));
  nn::registerModuleType("test.FailOn", [armed](const nn::Config&, std::vector<nn::ModulePtr>) {
    return std::make_shared<FailOn>(Device::cpu(1), armed);
  });
  auto table = std::make_shared<DataParallelTable>(0);
  table->add(net, cpus(3));
  const Tensor x = nn::test::randomTensor({9, 6}, 3);
  for (int attempt = 0; attempt < 20; ++attempt)
    REQUIRE_THROWS_WITH(table->forward(x), Catch::Contains("cpu:1") && Catch::Contains("planted failure") &&
                                               Catch::Contains("nn.DataParallelTable"));
  *armed = false;
  auto plain = makeNet(4);
  REQUIRE(relDiff(table->forward(x), plain->forward(x)) < 1e-6);
}

TEST_CASE("threads() runs once on each device's own thread, where replicas run", "[DataParallelTable]") {
  auto table = std::make_shared<DataParallelTable>(0);
  table->add(makeNet(1), cpus(3));
  std::mutex m;
  std::vector<std::pair<std::string, std::thread::id>> calls;
  table->threads([&](const Device& d) {
    std::lock_guard<std::mutex> lock(m);
    calls.emplace_back(d.str(), std::this_thread::get_id());
  });
  REQUIRE(calls.size() == 3);
  std::set<std::string> devices;
  std::set<std::thread::id> ids;
  for (auto& [d, id] : calls) devices.insert(d), ids.insert(id);
  REQUIRE(devices == std::set<std::string>{"cpu:0", "cpu:1", "cpu:2"});
  REQUIRE(ids.size() == 3);
  REQUIRE(ids.count(std::this_thread::get_id()) == 0);
}

TEST_CASE("DataParallelTable is a module: in a Sequential, printed, cloned", "[DataParallelTable]") {
  auto table = std::make_shared<DataParallelTable>(0, true, false);
  table->add(makeNet(6), cpus(2));
  auto outer = std::make_shared<nn::Sequential>();
  outer->add(table);
  outer->add(std::make_shared<nn::ReLU>());
  const Tensor x = nn::test::randomTensor({5, 6}, 3);
  auto plain = makeNet(6);
  REQUIRE(relDiff(outer->forward(x), nn::ReLU().forward(plain->forward(x))) < 1e-6);
  REQUIRE(table->toString().rfind("nn.DataParallelTable(dim 0, cpu:0, cpu:1) {\n  (1): nn.Sequential {", 0) == 0);
  REQUIRE(table->get(1)->device() == Device::cpu(1));
  auto copy = std::dynamic_pointer_cast<DataParallelTable>(table->clone());
  REQUIRE(copy != nullptr);
  REQUIRE(copy->replicaCount() == 2);
  REQUIRE(relDiff(copy->forward(x), table->forward(x)) == 0);
  copy->getParameters().first.fill_(0);
  REQUIRE(relDiff(table->forward(x), plain->forward(x)) < 1e-6);
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

TEST_CASE("buffers: the first replica's are broadcast by default, averaged on request", "[DataParallelTable]") {
  const Tensor x = nn::test::randomTensor({8, 6}, 4);
  const Tensor g = nn::test::randomTensor({8, 3}, 5);
  SECTION("broadcast of the first replica's buffers") {
    auto table = std::make_shared<DataParallelTable>(0);
    table->add(makeBatchNormNet(1), cpus(2));
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
    table->add(makeBatchNormNet(1), cpus(2));
    table->forward(x);
    const std::vector<float> a = runningMean(table->get(0)), b = runningMean(table->get(1));
    table->backward(x, g);
    table->syncParameters();
    for (int r = 0; r < 2; ++r) {
      const std::vector<float> m = runningMean(table->get(r));
      for (size_t i = 0; i < m.size(); ++i) REQUIRE(m[i] == Approx((a[i] + b[i]) / 2).margin(1e-7));
    }
  }
}

TEST_CASE("a table saved on N devices loads on M devices or as a plain module", "[DataParallelTable]") {
  nn::test::TempDir dir;
  const std::string path = dir.file("table.safetensors");
  const Tensor x = nn::test::randomTensor({7, 6}, 8);
  auto table = std::make_shared<DataParallelTable>(0, true, false);
  table->add(makeBatchNormNet(3), cpus(2));
  table->forward(x);
  table->backward(x, nn::test::randomTensor({7, 3}, 9));
  table->updateParameters(0.1f);
  table->evaluate();
  const std::vector<float> expected = table->forward(x).toVector();
  nn::save(*table, path);

  // As saved: a table on the same devices.
  auto loaded = std::dynamic_pointer_cast<DataParallelTable>(nn::load(path));
  REQUIRE(loaded != nullptr);
  REQUIRE(loaded->devices() == cpus(2));
  REQUIRE_FALSE(loaded->isTraining());
  REQUIRE(nn::test::maxAbsDiff(loaded->forward(x), expected) < 1e-6);

  // Onto three devices: the state dict names are the plain module's.
  auto three = std::make_shared<DataParallelTable>(0, true, false);
  three->add(makeBatchNormNet(99), cpus(3));
  three->forward(x);
  nn::loadStateInto(*three, path);
  REQUIRE(three->isStale(2));
  three->evaluate();
  REQUIRE(nn::test::maxAbsDiff(three->forward(x), expected) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(three->get(2)->getParameters().first, table->getParameters().first) == 0);

  // As a plain module.
  auto plain = makeBatchNormNet(42);
  nn::loadStateInto(*plain, path);
  plain->evaluate();
  REQUIRE(nn::test::maxAbsDiff(plain->forward(x), expected) < 1e-6);
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

TEST_CASE("replicas failing again and again never hang a thread or leave a replica stale", "[DataParallelTable]") {
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
  table->add(build(), cpus(3));
  nn::Generator g(5);
  int failures = 0;
  for (int step = 0; step < 200; ++step) {
    fault->pass = static_cast<int>(g.below(4));  // a quarter of the steps run clean
    fault->device = static_cast<int>(g.below(3));
    const Tensor x = nn::test::randomTensor({9, 6}, 300 + step);
    const Tensor gradOut = nn::test::randomTensor({9, 3}, 600 + step);
    try {
      table->zeroGradParameters();
      table->forward(x);
      table->backward(x, gradOut);
      table->updateParameters(0.05f);
    } catch (const nn::Error& e) {
      ++failures;
      REQUIRE(std::string(e.what()).find("planted fault") != std::string::npos);
      REQUIRE(std::string(e.what()).find("cpu:" + std::to_string(fault->device.load())) != std::string::npos);
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
  REQUIRE(relDiff(table->forward(x), plain->forward(x)) < 1e-5);
  for (size_t r = 0; r < table->replicaCount(); ++r)
    REQUIRE(relDiff(table->get(r)->getParameters().first, plain->getParameters().first) < 1e-5);
}

TEST_CASE("moving a tree that holds a table is refused before anything moves, but to the first replica's device",
          "[DataParallelTable]") {
  auto table = std::make_shared<DataParallelTable>(0, true, false);
  table->add(makeNet(5), cpus(2));
  nn::manualSeed(6);
  auto before = std::make_shared<nn::Linear>(6, 6);  // moved ahead of the table, were anything moved
  auto plain = std::make_shared<nn::Sequential>();
  plain->add(before->clone());
  plain->add(makeNet(5));
  before->to(Device::cpu(3));
  auto outer = std::make_shared<nn::Sequential>();
  outer->add(before);
  outer->add(table);
  const Tensor x = nn::test::randomTensor({5, 6}, 3);

  REQUIRE_THROWS_WITH(outer->to(Device::cpu(4)),
                      Catch::Contains("nn.DataParallelTable(dim 0, cpu:0, cpu:1)") && Catch::Contains("cpu:4"));
  REQUIRE_THROWS_WITH(table->to(Device::cpu(1)), Catch::Contains("nn.DataParallelTable") && Catch::Contains("cpu:1"));
  REQUIRE(before->weight.device() == Device::cpu(3));
  REQUIRE(table->get(0)->device() == Device::cpu(0));
  REQUIRE(table->get(1)->device() == Device::cpu(1));

  // The first replica's device: the rest of the tree may go there, and the table stays whole.
  outer->to(Device::cpu(0));
  REQUIRE(before->weight.device() == Device::cpu(0));
  REQUIRE(table->get(1)->device() == Device::cpu(1));
  REQUIRE(relDiff(outer->forward(x), plain->forward(x)) < 1e-6);
}

namespace {

// Writes 7 into its gradOutput in updateGradInput (as an in-place module does) and records
// whether accGradParameters then saw the 7s: it does when both passes get one tensor.
class MarksGradOutput : public nn::Module {
 public:
  static nn::ModulePtr create(const nn::Config&, std::vector<nn::ModulePtr>) {
    return std::make_shared<MarksGradOutput>();
  }
  const Tensor& updateOutput(const Tensor& input) override {
    output.set_(input);
    return output;
  }
  const Tensor& updateGradInput(const Tensor&, const Tensor& gradOutput) override {
    Tensor(gradOutput).fill_(7);
    gradInput.set_(gradOutput);
    return gradInput;
  }
  void accGradParameters(const Tensor&, const Tensor& gradOutput, float) override {
    const std::vector<float> seen = gradOutput.toVector();
    sawMark = std::all_of(seen.begin(), seen.end(), [](float v) { return v == 7; });
  }
  std::string typeName() const override { return "test.MarksGradOutput"; }

  bool sawMark = false;
};

const nn::ModuleRegistration marksGradOutputRegistration("test.MarksGradOutput", &MarksGradOutput::create);

}  // namespace

NN_MULTI_DEVICE_TEST_CASE(
    "backward scatters gradOutput once: a replica's two passes get one slice, as a plain "
    "module's get one gradOutput",
    "[DataParallelTable]") {
  const int n = std::min(3, kind.available());
  auto table = std::make_shared<DataParallelTable>(0, true, false);
  table->add(std::make_shared<MarksGradOutput>(), kind.devices(n));
  const Tensor x = nn::test::randomTensor({7, 4}, 1);
  const Tensor g = nn::test::randomTensor({7, 4}, 2);
  table->forward(x);
  table->backward(x, g);
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    REQUIRE(std::dynamic_pointer_cast<MarksGradOutput>(table->get(i))->sawMark);
  }
  // The caller's gradOutput is the table's input, not a replica's: it is left alone.
  REQUIRE(nn::test::maxAbsDiff(g, nn::test::randomTensor({7, 4}, 2)) == 0);
}

NN_MULTI_DEVICE_TEST_CASE("updateGradInput and accGradParameters called on their own each use the gradOutput given",
                          "[DataParallelTable]") {
  const int n = std::min(3, kind.available());
  auto plain = makeNet(8);
  auto table = std::make_shared<DataParallelTable>(0, true, false);
  table->add(makeNet(8), kind.devices(n));
  // As Torch7's Sequential, accGradParameters reads the gradInputs inside the module from the
  // last updateGradInput: a table that kept g1's slices for g2 would differ in the last layer.
  const Tensor x = nn::test::randomTensor({9, 6}, 1);
  const Tensor g1 = nn::test::randomTensor({9, 3}, 2), g2 = nn::test::randomTensor({9, 3}, 3);
  for (nn::Module* m : {static_cast<nn::Module*>(plain.get()), static_cast<nn::Module*>(table.get())}) {
    m->zeroGradParameters();
    m->forward(x);
    m->updateGradInput(x, g1);
    m->accGradParameters(x, g2, 1.f);
  }
  REQUIRE(relDiff(table->gradInput, plain->gradInput) < 1e-6);
  auto [pv, pg] = plain->parameters();
  auto [tv, tg] = table->parameters();
  for (size_t i = 0; i < pg.size(); ++i) REQUIRE(relDiff(tg[i], pg[i]) < 1e-5);

  // One gradOutput tensor, resized and refilled in place for the next batch: the forward in
  // between makes a new split, so accGradParameters scatters it again.
  nn::manualSeed(9);
  auto plainLinear = std::make_shared<nn::Linear>(6, 3);
  auto linearTable = std::make_shared<DataParallelTable>(0, true, false);
  linearTable->add(plainLinear->clone(), kind.devices(n));
  Tensor g = nn::test::randomTensor({9, 3}, 4);
  const Tensor x8 = nn::test::randomTensor({8, 6}, 5);
  for (nn::Module* m : {static_cast<nn::Module*>(plainLinear.get()), static_cast<nn::Module*>(linearTable.get())}) {
    g.resize_({9, 3}).copy_(nn::test::randomTensor({9, 3}, 4));
    m->zeroGradParameters();
    m->forward(x);
    m->updateGradInput(x, g);
    g.resize_({8, 3}).copy_(nn::test::randomTensor({8, 3}, 6));
    m->forward(x8);
    m->accGradParameters(x8, g, 1.f);
  }
  REQUIRE(relDiff(linearTable->get(0)->parameters().second[0], plainLinear->gradWeight) < 1e-5);
  REQUIRE(relDiff(linearTable->get(0)->parameters().second[1], plainLinear->gradBias) < 1e-5);
}
