// DataParallelTable's numbers, each body on every device type (tests/support/DeviceTest.h): on
// CPU devices cpu:0, cpu:1, ... always, on CUDA devices where found. The plain module's forward,
// gradients and training steps on the whole batch, how a batch is split, one scatter per backward,
// NoSync's deferred reduce.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "nn/backend/Communicator.h"
#include "nn/nn.h"
#include "nn/parallel/DataParallelSteps.h"
#include "nn/parallel/DataParallelTable.h"
#include "nn/parallel/DeviceThreads.h"
#include "tests/parallel/DataParallelHelpers.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/support/Profiling.h"
#include "tests/support/TempDir.h"

using nn::DataParallelTable;
using nn::Device;
using nn::Tensor;
using nn::test::DeviceKind;
using nn::test::profileRow;
using nn::test::ProfilingOn;
using nn::test::batchInput;
using nn::test::bound;
using nn::test::filled;
using nn::test::iota;
using nn::test::makeNet;
using nn::test::relDiff;
using nn::test::upTo;

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
