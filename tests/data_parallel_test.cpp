// DataParallelTable, each body on every device type (tests/DeviceTest.h): on CPU devices
// cpu:0, cpu:1, ... always, on CUDA devices where found. First each step alone (scatter,
// gather, reduce gradients, broadcast parameters; nn/parallel/DataParallelSteps.h), then the table:
// the plain module's numbers on the whole batch, how a batch is split, stale replicas, one
// scatter per backward, errors, threads, saving and moving.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "cunn/cunn.h"
#include "tests/DeviceTest.h"
#include "tests/GradCheck.h"
#include "tests/Profiling.h"
#include "tests/TempDir.h"

using nn::DataParallelTable;
using nn::Device;
using nn::Tensor;
using nn::test::DeviceKind;
using nn::test::profileRow;
using nn::test::ProfilingOn;

namespace {

std::shared_ptr<nn::Sequential> makeNet(uint64_t seed) {
  nn::manualSeed(seed);
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Linear>(6, 8));
  net->add(std::make_shared<nn::ReLU>());
  net->add(std::make_shared<nn::Linear>(8, 3));
  return net;
}

// Devices 0 .. min(count, available) - 1 of the kind: a body written for 4 devices runs on as
// many as there are (two GPUs, say).
int upTo(const DeviceKind& kind, int count) { return std::min(count, kind.available()); }

// Largest difference relative to max(1, |value|), so the bound reads as float tolerance; the
// tensors may be on any devices.
double relDiff(const Tensor& a, const Tensor& b) {
  const auto x = a.toVector(), y = b.toVector();
  if (x.size() != y.size()) return 1e30;
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, std::fabs(double(x[i]) - y[i]) / std::max(1.0, std::fabs(double(y[i]))));
  return worst;
}

// The bound for comparing with the plain module on the host: on CPU devices the replicas sum
// as it does, up to OpenBLAS's rounding of fewer rows; cuBLAS and cuDNN sum in other orders.
double bound(const DeviceKind& kind, double onCpu) { return kind.isCpu() ? onCpu : std::max(onCpu, 1e-4); }

// Input whose dimension `dim` is the batch: [batch, 6] for dim 0, [2, batch, 6] for dim 1.
Tensor batchInput(int dim, int64_t batch, uint64_t seed) {
  return dim == 0 ? nn::test::randomTensor({batch, 6}, seed) : nn::test::randomTensor({2, batch, 6}, seed);
}

// 0, 1, 2, ... in row-major order: every element tells where it came from.
Tensor iota(const std::vector<int64_t>& sizes, float first = 0) {
  std::vector<float> values(static_cast<size_t>(nn::product(sizes)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = first + static_cast<float>(i);
  return Tensor::fromVector(sizes, values);
}

std::vector<float> filled(size_t count, float value) { return std::vector<float>(count, value); }

}  // namespace

// --- the steps, each alone ---------------------------------------------------------------

NN_MULTI_DEVICE_TEST_CASE("step scatter: 15 rows on 4 devices are 4, 4, 4 and 3, each device's own rows on it",
                          "[DataParallelTable][steps]") {
  std::vector<nn::Slice> slices;
  auto lengths = [&] {
    std::vector<int64_t> out;
    for (const nn::Slice& s : slices) out.push_back(s.length);
    return out;
  };
  nn::splitBatch(15, 4, slices);
  REQUIRE(lengths() == std::vector<int64_t>{4, 4, 4, 3});
  REQUIRE(slices[3].start == 12);
  nn::splitBatch(6, 4, slices);  // the remainder, 2, to the first two
  REQUIRE(lengths() == std::vector<int64_t>{2, 2, 1, 1});
  REQUIRE(slices[2].start == 4);
  nn::splitBatch(2, 4, slices);  // fewer rows than devices: the first two, a row each
  REQUIRE(lengths() == std::vector<int64_t>{1, 1});
  REQUIRE(slices[1].start == 1);

  const int n = upTo(kind, 4);
  for (int dim : {0, 1}) {
    CAPTURE(dim);
    const Tensor src = dim == 0 ? iota({15, 3}) : iota({2, 15, 3});
    nn::splitBatch(15, static_cast<size_t>(n), slices);
    std::vector<Tensor> parts(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      CAPTURE(i);
      const nn::Slice s = slices[static_cast<size_t>(i)];
      const Tensor& part = nn::scatterSlice(src, dim, s, kind.device(i), parts[static_cast<size_t>(i)]);
      REQUIRE(part.is(parts[static_cast<size_t>(i)]));
      REQUIRE(part.device() == kind.device(i));
      const Tensor expected = src.narrow(dim, s.start, s.length).contiguous();
      REQUIRE(part.sizes() == expected.sizes());
      REQUIRE(part.toVector() == expected.toVector());
    }
  }
}

NN_MULTI_DEVICE_TEST_CASE("step gather: each device's part joined along dim, in order, on the first device",
                          "[DataParallelTable][steps]") {
  const int n = upTo(kind, 3);
  const std::vector<int64_t> lengths = {2, 3, 1};
  // Part i is [2, lengths[i], 2] holding 100 i, 100 i + 1, ...
  std::vector<Tensor> parts;
  std::vector<const Tensor*> pointers;
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    parts.push_back(kind.on(iota({2, lengths[static_cast<size_t>(i)], 2}, 100.f * static_cast<float>(i)), i));
    total += lengths[static_cast<size_t>(i)];
  }
  for (const Tensor& p : parts) pointers.push_back(&p);
  Tensor joined;
  nn::gatherParts(pointers, 1, kind.devices(n), joined);
  REQUIRE(joined.device() == kind.device(0));
  REQUIRE(joined.sizes() == std::vector<int64_t>{2, total, 2});
  // Row a of the joined tensor is row a of each part in turn.
  std::vector<float> expected;
  for (int64_t a = 0; a < 2; ++a)
    for (int i = 0; i < n; ++i) {
      const int64_t length = lengths[static_cast<size_t>(i)];
      for (int64_t k = 0; k < length * 2; ++k)
        expected.push_back(100.f * static_cast<float>(i) + static_cast<float>(a * length * 2 + k));
    }
  REQUIRE(joined.toVector() == expected);

  // A part whose size differs in another dimension is named by its device.
  const Tensor wrong = kind.on(Tensor::zeros({2, 1, 3}), n - 1);
  pointers.back() = &wrong;
  REQUIRE_THROWS_WITH(nn::gatherParts(pointers, 1, kind.devices(n), joined),
                      Catch::Contains(kind.device(n - 1).str()) && Catch::Contains("[2, 1, 3]"));
}

namespace {

// Linear(3, 2) replicas, one per device, weights 0.5, replica r's gradients r + 1 (weight)
// and 10 (r + 1) (bias).
std::vector<std::shared_ptr<nn::Linear>> linearReplicas(const std::vector<Device>& devices) {
  std::vector<std::shared_ptr<nn::Linear>> out;
  for (size_t r = 0; r < devices.size(); ++r) {
    auto linear = std::make_shared<nn::Linear>(3, 2);
    linear->to(devices[r]);
    linear->weight.fill_(0.5f);
    linear->bias.fill_(0.5f);
    linear->gradWeight.fill_(static_cast<float>(r + 1));
    linear->gradBias.fill_(10.f * static_cast<float>(r + 1));
    out.push_back(linear);
  }
  return out;
}

std::vector<nn::ModulePtr> asModules(const std::vector<std::shared_ptr<nn::Linear>>& linears) {
  return std::vector<nn::ModulePtr>(linears.begin(), linears.end());
}

}  // namespace

NN_MULTI_DEVICE_TEST_CASE("step reduce gradients: the first replica gets the sum, the others keep their own",
                          "[DataParallelTable][steps]") {
  const int n = upTo(kind, 3);
  const std::vector<Device> devices = kind.devices(n);
  auto communicator = nn::makeCommunicator(devices, false);
  const float sum = static_cast<float>(n * (n + 1) / 2);  // 1 + 2 + ... + n
  for (bool flatten : {true, false}) {
    CAPTURE(flatten);
    const auto linears = linearReplicas(devices);
    const auto replicas = asModules(linears);
    nn::ReplicaTensors tensors;
    if (flatten) tensors.flatten(replicas);
    nn::reduceGradients(replicas, *communicator, tensors);
    REQUIRE(nn::test::maxAbsDiff(linears[0]->gradWeight, filled(6, sum)) == 0);
    REQUIRE(nn::test::maxAbsDiff(linears[0]->gradBias, filled(2, 10 * sum)) == 0);
    for (int r = 1; r < n; ++r) {
      CAPTURE(r);
      REQUIRE(nn::test::maxAbsDiff(linears[static_cast<size_t>(r)]->gradWeight, filled(6, float(r + 1))) == 0);
      REQUIRE(nn::test::maxAbsDiff(linears[static_cast<size_t>(r)]->gradBias, filled(2, 10.f * float(r + 1))) == 0);
    }
    for (const auto& linear : linears) REQUIRE(nn::test::maxAbsDiff(linear->weight, filled(6, 0.5f)) == 0);
  }

  SECTION("a replica flattened again since (an outer getParameters) is reduced parameter by parameter") {
    const auto linears = linearReplicas(devices);
    const auto replicas = asModules(linears);
    nn::ReplicaTensors tensors;
    tensors.flatten(replicas);
    nn::reduceGradients(replicas, *communicator, tensors);
    auto outer = std::make_shared<nn::Sequential>();
    outer->add(replicas.back());
    outer->getParameters();
    linears.back()->gradWeight.fill_(7);  // its old flat buffer still holds n
    linears[0]->gradWeight.fill_(1);
    nn::reduceGradients(replicas, *communicator, tensors);
    REQUIRE(nn::test::maxAbsDiff(linears[0]->gradWeight, filled(6, sum - static_cast<float>(n) + 7)) == 0);
  }
  SECTION("replicas without parameters have nothing to reduce") {
    std::vector<nn::ModulePtr> relus;
    for (int r = 0; r < n; ++r) relus.push_back(std::make_shared<nn::ReLU>());
    nn::ReplicaTensors tensors;
    tensors.flatten(relus);
    REQUIRE_NOTHROW(nn::reduceGradients(relus, *communicator, tensors));
  }
}

NN_MULTI_DEVICE_TEST_CASE("step broadcast parameters: the first replica's parameters to all, buffers by the policy",
                          "[DataParallelTable][steps]") {
  const int n = upTo(kind, 3);
  const std::vector<Device> devices = kind.devices(n);
  auto communicator = nn::makeCommunicator(devices, false);
  for (bool flatten : {true, false})
    for (nn::BufferPolicy policy : {nn::BufferPolicy::BroadcastFirst, nn::BufferPolicy::Average}) {
      CAPTURE(flatten, policy == nn::BufferPolicy::Average);
      // Replica r: weight r + 1, bias -(r + 1), gradient 100 (r + 1), running mean 10 (r + 1),
      // running variance r + 1.
      std::vector<std::shared_ptr<nn::BatchNormalization>> norms;
      std::vector<nn::ModulePtr> replicas;
      for (int r = 0; r < n; ++r) {
        auto bn = std::make_shared<nn::BatchNormalization>(2);
        bn->to(devices[static_cast<size_t>(r)]);
        const float v = static_cast<float>(r + 1);
        bn->weight.fill_(v);
        bn->bias.fill_(-v);
        bn->gradWeight.fill_(100 * v);
        bn->runningMean.fill_(10 * v);
        bn->runningVar.fill_(v);
        norms.push_back(bn);
        replicas.push_back(bn);
      }
      nn::ReplicaTensors tensors;
      if (flatten) tensors.flatten(replicas);
      nn::broadcastParameters(replicas, *communicator, tensors, policy);
      const float average = static_cast<float>(n + 1) / 2;  // of 1, 2, ..., n
      const bool first = policy == nn::BufferPolicy::BroadcastFirst;
      for (int r = 0; r < n; ++r) {
        CAPTURE(r);
        const auto& bn = norms[static_cast<size_t>(r)];
        REQUIRE(nn::test::maxAbsDiff(bn->weight, filled(2, 1)) == 0);
        REQUIRE(nn::test::maxAbsDiff(bn->bias, filled(2, -1)) == 0);
        REQUIRE(nn::test::maxAbsDiff(bn->gradWeight, filled(2, 100.f * float(r + 1))) == 0);  // left alone
        REQUIRE(nn::test::maxAbsDiff(bn->runningMean, filled(2, first ? 10 : 10 * average)) < 1e-5);
        REQUIRE(nn::test::maxAbsDiff(bn->runningVar, filled(2, first ? 1 : average)) < 1e-6);
      }
    }
}

// --- the table ---------------------------------------------------------------------------

NN_MULTI_DEVICE_TEST_CASE("DataParallelTable equals the plain module on the whole batch", "[DataParallelTable]") {
  for (int dim : {0, 1})
    for (bool flatten : {true, false})
      for (int devices = 1; devices <= upTo(kind, 4); ++devices)
        for (int64_t batch : {1, 9, 15, 64}) {
          CAPTURE(dim, flatten, devices, batch);
          auto plain = makeNet(7);
          auto table = std::make_shared<DataParallelTable>(dim, flatten, false);
          table->add(makeNet(7), kind.devices(devices));
          const Tensor x = batchInput(dim, batch, 100 + static_cast<uint64_t>(batch));

          const Tensor& expected = plain->forward(x);
          const Tensor& out = table->forward(x);
          REQUIRE(out.device() == kind.device(0));
          REQUIRE(out.sizes() == expected.sizes());
          REQUIRE(relDiff(out, expected) < bound(kind, 1e-6));

          const Tensor g = nn::test::randomTensor(expected.sizes(), 5);
          plain->zeroGradParameters();
          table->zeroGradParameters();
          // Two backward calls: gradients accumulate the same way on both.
          for (int pass = 0; pass < 2; ++pass) {
            plain->backward(x, g);
            table->backward(x, g);
          }
          REQUIRE(relDiff(table->gradInput, plain->gradInput) < bound(kind, 1e-6));
          auto [pv, pg] = plain->parameters();
          auto [tv, tg] = table->parameters();
          REQUIRE(tg.size() == pg.size());
          for (size_t i = 0; i < pg.size(); ++i) REQUIRE(relDiff(tg[i], pg[i]) < bound(kind, 1e-5));
        }
}

NN_MULTI_DEVICE_TEST_CASE("a table of a network that uses a Linear twice sums each gradient once per replica",
                          "[DataParallelTable]") {
  auto makeTwice = [] {
    nn::manualSeed(9);
    auto twice = std::make_shared<nn::Linear>(6, 6);
    return std::make_shared<nn::Sequential>(
        std::vector<nn::ModulePtr>{twice, std::make_shared<nn::Tanh>(), twice, std::make_shared<nn::Linear>(6, 3)});
  };
  for (bool flatten : {true, false})
    for (int devices = 1; devices <= upTo(kind, 4); ++devices) {
      CAPTURE(flatten, devices);
      auto plain = makeTwice();
      auto table = std::make_shared<DataParallelTable>(0, flatten, false);
      table->add(makeTwice(), kind.devices(devices));
      const Tensor x = batchInput(0, 15, 41);
      const Tensor g = nn::test::randomTensor({15, 3}, 42);
      plain->zeroGradParameters();
      table->zeroGradParameters();
      plain->forward(x);
      plain->backward(x, g);
      table->forward(x);
      table->backward(x, g);
      auto [pv, pg] = plain->parameters();
      auto [tv, tg] = table->parameters();
      REQUIRE(tg.size() == pg.size());
      for (size_t i = 0; i < pg.size(); ++i) REQUIRE(relDiff(tg[i], pg[i]) < bound(kind, 1e-5));
      // A step and the next forward: the replicas hold the stepped parameters.
      auto [flat, flatGrad] = table->getParameters();
      flat.add_(flatGrad, -0.1f);
      auto [plainFlat, plainGrad] = plain->getParameters();
      plainFlat.add_(plainGrad, -0.1f);
      REQUIRE(relDiff(table->forward(x), plain->forward(x)) < bound(kind, 1e-5));
    }
}

NN_MULTI_DEVICE_TEST_CASE("a table in two places of a tree, Sequential{t, Tanh, t}, gives the plain module's gradients",
                          "[DataParallelTable]") {
  // The plain module in two places: backward at its first place gets that place's input (x),
  // not the second's; the table must scatter that input again, not use the last forward's.
  for (bool flatten : {true, false})
    for (int devices = 1; devices <= upTo(kind, 3); ++devices)
      for (int64_t batch : {9, 15}) {
        CAPTURE(flatten, devices, batch);
        nn::manualSeed(13);
        auto linear = std::make_shared<nn::Linear>(6, 6);
        const nn::ModulePtr plainLinear = linear->clone();
        nn::Sequential plain{plainLinear, std::make_shared<nn::Tanh>(), plainLinear};
        auto table = std::make_shared<DataParallelTable>(0, flatten, false);
        table->add(linear, kind.devices(devices));
        nn::Sequential tree{table, std::make_shared<nn::Tanh>(), table};
        const Tensor x = batchInput(0, batch, 60 + static_cast<uint64_t>(batch));
        const Tensor g = nn::test::randomTensor({batch, 6}, 61);
        // Two steps, each stepping the parameters, so that the second runs on refreshed replicas.
        for (int step = 0; step < 2; ++step) {
          CAPTURE(step);
          plain.zeroGradParameters();
          tree.zeroGradParameters();
          REQUIRE(relDiff(tree.forward(kind.on(x)), plain.forward(x)) < bound(kind, 1e-6));
          REQUIRE(relDiff(tree.backward(kind.on(x), kind.on(g)), plain.backward(x, g)) < bound(kind, 1e-5));
          auto [tv, tg] = tree.getParameters();
          auto [pv, pg] = plain.getParameters();
          REQUIRE(relDiff(tg, pg) < bound(kind, 1e-5));
          tv.add_(tg, -0.1f);
          pv.add_(pg, -0.1f);
        }
      }
}

NN_MULTI_DEVICE_TEST_CASE("a batch is split 4, 4, 4, 3 over four devices, each replica running its own rows",
                          "[DataParallelTable]") {
  // 15 rows: 4, 4, 4, 3 on four devices; 5, 5, 5 on three; 8, 7 on two.
  const int n = upTo(kind, 4);
  const std::vector<int64_t> rows = n == 4   ? std::vector<int64_t>{4, 4, 4, 3}
                                    : n == 3 ? std::vector<int64_t>{5, 5, 5}
                                             : std::vector<int64_t>{8, 7};
  for (int dim : {0, 1}) {
    CAPTURE(dim);
    auto plain = makeNet(11);
    auto table = std::make_shared<DataParallelTable>(dim, true, false);
    table->add(makeNet(11), kind.devices(n));
    const Tensor x = batchInput(dim, 15, 12);
    table->forward(x);
    int64_t start = 0;
    for (int i = 0; i < n; ++i) {
      CAPTURE(i);
      const int64_t length = rows[static_cast<size_t>(i)];
      const Tensor& out = table->get(static_cast<size_t>(i))->output;
      REQUIRE(out.device() == kind.device(i));
      REQUIRE(out.size(dim) == length);
      // The plain module on this replica's rows alone gives its output.
      const Tensor mine = x.narrow(dim, start, length).contiguous();
      REQUIRE(relDiff(out, plain->forward(mine)) < bound(kind, 1e-6));
      start += length;
    }
  }
}

NN_MULTI_DEVICE_TEST_CASE("gradients stay exact over steps whose batches use different numbers of devices",
                          "[DataParallelTable]") {
  // After a reduce the other replicas' gradients are already counted in the first's (Note
  // [Counted gradients]); each later step must still add exactly its own batch, whether a
  // replica sat out the step before (batch 2 on 4 devices) or not.
  auto plain = makeNet(7);
  auto table = std::make_shared<DataParallelTable>(0, true, false);
  table->add(makeNet(7), kind.devices(upTo(kind, 4)));
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
    for (size_t i = 0; i < pg.size(); ++i) REQUIRE(relDiff(tg[i], pg[i]) < bound(kind, 1e-5));
  }
}

NN_MULTI_DEVICE_TEST_CASE("10 SGD steps with momentum give the plain module's parameters", "[DataParallelTable]") {
  for (int64_t batch : {9, 15}) {
    CAPTURE(batch);
    auto plain = makeNet(3);
    auto table = std::make_shared<DataParallelTable>(0);
    table->add(makeNet(3), kind.devices(2));
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
      const Tensor x = nn::test::randomTensor({batch, 6}, 1000 + static_cast<uint64_t>(step));
      std::vector<float> labels;
      for (int64_t i = 0; i < batch; ++i) labels.push_back(static_cast<float>((i * 7 + step) % 3));
      const Tensor y = Tensor::fromVector({batch}, labels);
      plain->zeroGradParameters();
      const Tensor& plainOut = plain->forward(x);
      criterion.forward(plainOut, y);
      plain->backward(x, criterion.backward(plainOut, y));
      plainSgd.step();

      const Tensor yOnTable = kind.on(y);
      table->zeroGradParameters();
      const Tensor& tableOut = table->forward(x);
      criterion.forward(tableOut, yOnTable);
      table->backward(x, criterion.backward(tableOut, yOnTable));
      tableSgd.step();
    }
    REQUIRE(relDiff(pw, initial) > 1e-2);  // training moved the parameters
    REQUIRE(relDiff(tw, pw) < bound(kind, 1e-5));
    // The other replica is refreshed before the next forward.
    const Tensor x = nn::test::randomTensor({batch, 6}, 5);
    REQUIRE(relDiff(table->forward(x), plain->forward(x)) < bound(kind, 1e-5));
    REQUIRE(relDiff(table->get(1)->getParameters().first, pw) < bound(kind, 1e-5));
  }
}

namespace {

// Passes its input through and adds scale * (rows of its input) to each gradient element, so
// that the replicas' gradients over a split batch sum to one module's over the whole batch,
// exactly.
class RowCount : public nn::Module {
 public:
  RowCount() {
    weight = Tensor::zeros({3});
    gradWeight = Tensor::zeros({3});
    registerParameter("weight", &weight, &gradWeight);
  }
  static nn::ModulePtr create(const nn::Config&, std::vector<nn::ModulePtr>) { return std::make_shared<RowCount>(); }
  const Tensor& updateOutput(const Tensor& input) override {
    output.set_(input);
    return output;
  }
  const Tensor& updateGradInput(const Tensor&, const Tensor& gradOutput) override {
    gradInput.set_(gradOutput);
    return gradInput;
  }
  void accGradParameters(const Tensor& input, const Tensor&, float scale) override {
    gradWeight.add_(Tensor::full({3}, scale * static_cast<float>(input.size(0)), gradWeight.device()));
  }
  std::string typeName() const override { return "test.RowCount"; }

  Tensor weight;
  Tensor gradWeight;
};

const nn::ModuleRegistration rowCountRegistration("test.RowCount", &RowCount::create);

}  // namespace

NN_MULTI_DEVICE_TEST_CASE("a table scatters, gathers, reduces and broadcasts exactly, with and without NCCL",
                          "[DataParallelTable]") {
  for (bool useNCCL : {true, false}) {
    CAPTURE(useNCCL);
    const std::vector<Device> devices = kind.devices(2);
    auto table = std::make_shared<DataParallelTable>(0, true, useNCCL);
    table->add(std::make_shared<RowCount>(), devices);
    REQUIRE(table->communicatorName() == (kind.isCpu() ? "host copies" : useNCCL ? "nccl" : "peer copies"));
    REQUIRE(table->get(1)->parameters().first[0].device() == devices[1]);

    // Parameters written through the table's handles, which mark the other replica stale,
    // reach it at the next forward. (A write through get(0)'s handles marks nothing: Note
    // [Stale replicas].)
    table->parameters().first[0].copy_(Tensor::fromVector({3}, {1, 2, 3}));
    REQUIRE(table->isStale(1));
    const Tensor x = nn::test::randomTensor({5, 4}, 5);  // rows 0-2 to the first device, 3-4 to the second
    const Tensor& y = table->forward(x);
    REQUIRE(y.device() == devices[0]);
    REQUIRE(y.toVector() == x.toVector());
    REQUIRE(table->get(1)->parameters().first[0].toVector() == std::vector<float>{1, 2, 3});

    // Each replica adds 0.5 * its rows (3 and 2): the first holds the sum after the reduce, the
    // second its own count (Note [Counted gradients]).
    table->zeroGradParameters();
    const Tensor g = nn::test::randomTensor({5, 4}, 6);
    const Tensor& gx = table->backward(x, g, 0.5f);
    REQUIRE(gx.device() == devices[0]);
    REQUIRE(gx.toVector() == g.toVector());
    REQUIRE(table->get(0)->parameters().second[0].toVector() == std::vector<float>{2.5f, 2.5f, 2.5f});
    REQUIRE(table->get(1)->parameters().second[0].toVector() == std::vector<float>{1, 1, 1});
    // A second backward adds the batch again to the first; the second starts from zero.
    table->backward(x, g, 0.5f);
    REQUIRE(table->get(0)->parameters().second[0].toVector() == std::vector<float>{5, 5, 5});
    REQUIRE(table->get(1)->parameters().second[0].toVector() == std::vector<float>{1, 1, 1});
  }
}

namespace {

// The relative difference |a - b| / |b| of two tensors on any devices.
double relativeDifference(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.toVector(), y = b.toVector();
  if (x.size() != y.size()) return 1e30;
  double diff = 0, norm = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    diff += (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
    norm += static_cast<double>(y[i]) * y[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-30));
}

// A small LeNet: every kind of layer of the example, on 12 x 12 images.
std::shared_ptr<nn::Sequential> smallLeNet() {
  nn::manualSeed(21);
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::SpatialConvolution>(1, 4, 3, 3));
  net->add(std::make_shared<nn::ReLU>(true));
  net->add(std::make_shared<nn::SpatialMaxPooling>(2, 2, 2, 2));
  net->add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 4 * 5 * 5}));
  net->add(std::make_shared<nn::Linear>(4 * 5 * 5, 10));
  net->add(std::make_shared<nn::LogSoftMax>());
  return net;
}

}  // namespace

NN_MULTI_DEVICE_TEST_CASE("a table of a small LeNet trains as the plain module on the host over 10 SGD steps",
                          "[DataParallelTable]") {
  for (bool useNCCL : {true, false})
    for (int64_t batch : {9, 15}) {
      CAPTURE(useNCCL, batch);
      auto plain = smallLeNet();
      auto table = std::make_shared<DataParallelTable>(0, true, useNCCL);
      table->add(smallLeNet(), kind.devices(2));
      nn::SgdOptions options;
      options.learningRate = 0.1f;
      options.momentum = 0.9f;
      options.weightDecay = 1e-3f;
      nn::SGD plainSgd(plain->getParameters(), options);
      nn::SGD tableSgd(table->getParameters(), options);
      const Tensor initial = plain->getParameters().first.clone();
      nn::ClassNLLCriterion plainCriterion, tableCriterion;
      for (int step = 0; step < 10; ++step) {
        const Tensor x = nn::test::randomTensor({batch, 1, 12, 12}, 2000 + static_cast<uint64_t>(step));
        std::vector<float> labels;
        for (int64_t i = 0; i < batch; ++i) labels.push_back(static_cast<float>((i * 7 + step) % 10));
        const Tensor y = Tensor::fromVector({batch}, labels);
        const Tensor yOnTable = kind.on(y);

        plain->zeroGradParameters();
        const Tensor& plainOut = plain->forward(x);
        plainCriterion.forward(plainOut, y);
        plain->backward(x, plainCriterion.backward(plainOut, y));
        plainSgd.step();

        table->zeroGradParameters();
        const Tensor& tableOut = table->forward(x);
        REQUIRE(tableOut.device() == kind.device(0));
        tableCriterion.forward(tableOut, yOnTable);
        table->backward(x, tableCriterion.backward(tableOut, yOnTable));
        tableSgd.step();
      }
      const Tensor trained = plain->getParameters().first;
      REQUIRE(relativeDifference(trained, initial) > 1e-2);  // training moved the parameters
      // Float rounding, grown over 10 steps (cuBLAS and cuDNN sum in other orders than OpenBLAS).
      CHECK(relativeDifference(table->getParameters().first, trained) < 1e-4);
      // The second replica is refreshed at the next forward, not at the optimizer's step.
      REQUIRE(table->isStale(1));
      table->forward(nn::test::randomTensor({batch, 1, 12, 12}, 3000));
      CHECK(relativeDifference(table->get(1)->getParameters().first, table->get(0)->getParameters().first) == 0.0);
    }
}

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

NN_MULTI_DEVICE_TEST_CASE("threads() runs once on each device's own thread, where replicas run",
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
  REQUIRE(ids.count(std::this_thread::get_id()) == 0);
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
  const int n = upTo(kind, 3);
  auto table = std::make_shared<DataParallelTable>(0, true, false);
  table->add(std::make_shared<MarksGradOutput>(), kind.devices(n));
  const Tensor x = nn::test::randomTensor({7, 4}, 1);
  const Tensor g = nn::test::randomTensor({7, 4}, 2);
  table->forward(x);
  table->backward(x, g);
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    REQUIRE(std::dynamic_pointer_cast<MarksGradOutput>(table->get(static_cast<size_t>(i)))->sawMark);
  }
  // The caller's gradOutput is the table's input, not a replica's: it is left alone.
  REQUIRE(nn::test::maxAbsDiff(g, nn::test::randomTensor({7, 4}, 2)) == 0);
}

NN_MULTI_DEVICE_TEST_CASE("updateGradInput and accGradParameters called on their own each use the gradOutput given",
                          "[DataParallelTable]") {
  const int n = upTo(kind, 3);
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
  REQUIRE(relDiff(table->gradInput, plain->gradInput) < bound(kind, 1e-6));
  auto [pv, pg] = plain->parameters();
  auto [tv, tg] = table->parameters();
  for (size_t i = 0; i < pg.size(); ++i) REQUIRE(relDiff(tg[i], pg[i]) < bound(kind, 1e-5));

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
  REQUIRE(relDiff(linearTable->get(0)->parameters().second[0], plainLinear->gradWeight) < bound(kind, 1e-5));
  REQUIRE(relDiff(linearTable->get(0)->parameters().second[1], plainLinear->gradBias) < bound(kind, 1e-5));
}

namespace {

// Two tables of makeNet(seed) over `devices`: the same parameters, for comparing two ways of
// running a step bit for bit.
std::pair<std::shared_ptr<DataParallelTable>, std::shared_ptr<DataParallelTable>> twinTables(
    uint64_t seed, const std::vector<Device>& devices, bool useNCCL) {
  auto a = std::make_shared<DataParallelTable>(0, true, useNCCL);
  a->add(makeNet(seed), devices);
  auto b = std::make_shared<DataParallelTable>(0, true, useNCCL);
  b->add(makeNet(seed), devices);
  return {a, b};
}

}  // namespace

NN_MULTI_DEVICE_TEST_CASE("backward runs both passes in one round, with the floats of the two calls one by one",
                          "[DataParallelTable]") {
  const int n = upTo(kind, 3);
  ProfilingOn on;
  for (bool gradInputNeeded : {true, false}) {
    CAPTURE(gradInputNeeded);
    const auto [together, apart] = twinTables(11, kind.devices(n), false);
    for (const auto& t : {together, apart}) {
      t->setGradInputNeeded(gradInputNeeded);
      t->zeroGradParameters();
      nn::resetProfile(*t);
    }
    // Two steps of 9 rows (uneven over the devices), the second's gradients added to the
    // first's, at scale 0.5.
    for (uint64_t step = 0; step < 2; ++step) {
      const Tensor x = nn::test::randomTensor({9, 6}, 20 + step);
      const Tensor g = nn::test::randomTensor({9, 3}, 30 + step);
      together->forward(x);
      apart->forward(x);
      // Backward's rounds of the device threads: the replicas' two passes (with the gather and
      // the reduce) in one, where the two calls take one each.
      const int64_t togetherRounds = together->deviceRounds(), apartRounds = apart->deviceRounds();
      together->backward(x, g, 0.5f);
      apart->updateGradInput(x, g);
      apart->accGradParameters(x, g, 0.5f);
      CHECK(together->deviceRounds() - togetherRounds == 1);
      CHECK(apart->deviceRounds() - apartRounds == 2);
      REQUIRE(together->gradInput.toVector() == apart->gradInput.toVector());
      REQUIRE(together->gradInput.numel() == (gradInputNeeded ? 9 * 6 : 0));
      auto [tv, tg] = together->parameters();
      auto [av, ag] = apart->parameters();
      for (size_t i = 0; i < tg.size(); ++i) REQUIRE(tg[i].toVector() == ag[i].toVector());
    }
    // The rounds that ran: one a backward for the one, two for the other.
    const nn::PassTime steps{1, 2};
    const std::string one = together->profileDetail(steps), two = apart->profileDetail(steps);
    CHECK_THAT(one, Catch::Contains("\nbackward ") && !Catch::Contains("\ngradInput ") &&
                        !Catch::Contains("\ngradParameters "));
    CHECK_THAT(two, Catch::Contains("\ngradInput ") && Catch::Contains("\ngradParameters ") &&
                        !Catch::Contains("\nbackward "));
  }
}

NN_MULTI_DEVICE_TEST_CASE("a batch on the first device is scattered in one call, with the floats of a copy per device",
                          "[DataParallelTable]") {
  const int n = upTo(kind, 3);
  // Elsewhere: a device of the kind outside the table on CPU runs, the host on CUDA runs.
  const Device elsewhere = kind.isCpu() ? Device::cpu(n) : Device::cpu(0);
  ProfilingOn on;
  for (bool useNCCL : {true, false}) {
    CAPTURE(useNCCL);
    const auto [oneCall, perDevice] = twinTables(12, kind.devices(n), useNCCL);
    for (const auto& t : {oneCall, perDevice}) {
      t->zeroGradParameters();
      nn::resetProfile(*t);
    }
    // 7 rows (3, 2, 2 on three devices), 2 (a device without rows: an empty part), and 3,001,
    // whose copies take long enough to show in the profile's thousandths of a millisecond.
    for (int64_t rows : {7, 2, 3001}) {
      CAPTURE(rows);
      const Tensor x = nn::test::randomTensor({rows, 6}, 40 + rows);
      const Tensor g = nn::test::randomTensor({rows, 3}, 50 + rows);
      const Tensor& y = oneCall->forward(x.to(kind.device(0)));
      REQUIRE(y.toVector() == perDevice->forward(x.to(elsewhere)).toVector());
      const Tensor& gx = oneCall->backward(x.to(kind.device(0)), g.to(kind.device(0)));
      REQUIRE(gx.toVector() == perDevice->backward(x.to(elsewhere), g.to(elsewhere)).toVector());
      auto [ov, og] = oneCall->parameters();
      auto [pv, pg] = perDevice->parameters();
      for (size_t i = 0; i < og.size(); ++i) REQUIRE(og[i].toVector() == pg[i].toVector());
    }
    // The routes that ran (Note [Scatter by the communicator]): the caller's one call for the
    // batch on the first device, each device thread's copy for the other.
    const nn::PassTime steps{1, 2};
    const std::string one = oneCall->profileDetail(steps), per = perDevice->profileDetail(steps);
    INFO(one);
    INFO(per);
    CHECK(profileRow(one, "one-call scatters").at(0) > 0);
    CHECK(profileRow(per, "one-call scatters").at(0) == 0);
    const std::vector<double> copies = profileRow(one, "of which scatters");
    REQUIRE(copies.size() == static_cast<size_t>(n));
    for (double copy : copies) CHECK(copy == 0);
    CHECK(profileRow(per, "of which scatters").at(0) > 0);
  }
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

NN_MULTI_DEVICE_TEST_CASE("NoSync defers the reduce: micro-batches sum on their devices, the synced backward sums all",
                          "[DataParallelTable]") {
  const int n = upTo(kind, 3);
  const auto [deferred, whole] = twinTables(13, kind.devices(n), false);
  // One step on 12 rows, and the same as micro-batches of 6, 3 and 3 (gradOutput of the whole's
  // rows: their gradients add up), the first two without a reduce.
  const Tensor x = kind.on(nn::test::randomTensor({12, 6}, 40));
  const Tensor g = kind.on(nn::test::randomTensor({12, 3}, 41));
  whole->zeroGradParameters();
  whole->forward(x);
  whole->backward(x, g);
  deferred->zeroGradParameters();
  const int64_t starts[] = {0, 6, 9}, sizes[] = {6, 3, 3};
  std::vector<float> afterFirst;
  for (int k = 0; k < 3; ++k) {
    const Tensor xk = x.narrow(0, starts[k], sizes[k]), gk = g.narrow(0, starts[k], sizes[k]);
    std::optional<nn::NoSync<DataParallelTable>> noSync;
    if (k < 2) noSync.emplace(*deferred);
    deferred->forward(xk);
    deferred->backward(xk, gk);
    if (k == 0) afterFirst = deferred->getParameters().second.toVector();
  }
  CHECK(deferred->sync());
  // Unreduced after the first micro-batch: the first replica held the gradients of its own rows
  // alone, the first 6 / n, as a plain module given them has.
  auto plain = makeNet(13);
  plain->to(kind.device());
  const Tensor mine = x.narrow(0, 0, 6 / n), gMine = g.narrow(0, 0, 6 / n);
  plain->zeroGradParameters();
  plain->forward(mine);
  plain->backward(mine, gMine);
  const std::vector<float> own = plain->getParameters().second.toVector();
  REQUIRE(own.size() == afterFirst.size());
  for (size_t i = 0; i < own.size(); ++i) CHECK(afterFirst[i] == Approx(own[i]).margin(1e-6));
  const std::vector<float> summed = deferred->getParameters().second.toVector(),
                           expected = whole->getParameters().second.toVector();
  REQUIRE(summed.size() == expected.size());
  for (size_t i = 0; i < summed.size(); ++i) CHECK(summed[i] == Approx(expected[i]).margin(1e-5));
  // Gradients left unreduced are zeroed by zeroGradParameters with the first replica's.
  {
    nn::NoSync<DataParallelTable> noSync(*deferred);
    deferred->forward(x);
    deferred->backward(x, g);
  }
  deferred->zeroGradParameters();
  deferred->forward(x);
  deferred->backward(x, g);
  const std::vector<float> again = deferred->getParameters().second.toVector();
  for (size_t i = 0; i < again.size(); ++i) CHECK(again[i] == Approx(expected[i]).margin(1e-5));
}
