// DataParallelTable with tables (Torch7's DataParallelTable on 'a Tensor or a table of
// Tensors'): every tensor of a table input is split along `dim`, table outputs and gradInputs
// are gathered tensor by tensor, and the results equal the plain module's on the whole batch
// (each replica's the plain module's on its own rows), over 1-4 devices, in training with a
// ParallelCriterion too; on CPU devices and, where found, CUDA devices.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "nn/backend/Communicator.h"
#include "nn/nn.h"
#include "nn/parallel/DataParallelSteps.h"
#include "nn/parallel/DataParallelTable.h"
#include "nn/parallel/DeviceThreads.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Activity;
using nn::DataParallelTable;
using nn::Table;
using nn::Tensor;
using nn::test::DeviceKind;

namespace {

int upTo(const DeviceKind& kind, int count) { return std::min(count, kind.available()); }

// Largest difference of two alike activities relative to max(1, |value|); huge where they are
// not alike. The tensors may be on any devices.
double relDiff(const Activity& a, const Activity& b) {
  if (!nn::sameShape(a, b) || !nn::sameShape(b, a)) return 1e30;
  const std::vector<float> x = nn::test::activityValues(a), y = nn::test::activityValues(b);
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, std::fabs(double(x[i]) - y[i]) / std::max(1.0, std::fabs(double(y[i]))));
  return worst;
}

double bound(const DeviceKind& kind, double onCpu) { return kind.isCpu() ? onCpu : std::max(onCpu, 1e-4); }

// {x [N, 6], {y [N, 3], z [N, 3]}} -> ParallelTable(Linear(6, 4), Sequential(CMulTable,
// Linear(3, 4))) -> ConcatTable(CAddTable, Sequential(CMulTable, Tanh)): a table of two [N, 4].
std::shared_ptr<nn::Sequential> tableNet(uint64_t seed) {
  nn::manualSeed(seed);
  auto second = std::make_shared<nn::Sequential>();
  second->add(std::make_shared<nn::CMulTable>()).add(std::make_shared<nn::Linear>(3, 4));
  auto parallel = std::make_shared<nn::ParallelTable>();
  parallel->add(std::make_shared<nn::Linear>(6, 4)).add(second);
  auto product = std::make_shared<nn::Sequential>();
  product->add(std::make_shared<nn::CMulTable>()).add(std::make_shared<nn::Tanh>());
  auto heads = std::make_shared<nn::ConcatTable>();
  heads->add(std::make_shared<nn::CAddTable>()).add(product);
  auto net = std::make_shared<nn::Sequential>();
  net->add(parallel).add(heads);
  return net;
}

Table tableInput(int64_t batch, uint64_t seed) {
  return Table{nn::test::randomTensor({batch, 6}, seed),
               Table{nn::test::randomTensor({batch, 3}, seed + 1), nn::test::randomTensor({batch, 3}, seed + 2)}};
}

// Rows [start, start + length) along dim 0 of every tensor of `a`: the slice a replica gets.
Activity rowsOf(const Activity& a, int64_t start, int64_t length) {
  if (a.isTensor()) return a.tensor().narrow(0, start, length).contiguous();
  Table t;
  for (const Activity& item : a.table()) t.push_back(rowsOf(item, start, length));
  return t;
}

// Each replica of `table` (on `devices` devices, after a forward and backward of `x`, `g` on a
// batch of `batch` rows) ran its own rows alone, in splitBatch's sizes: its output and gradInput are
// the plain module's on those rows. (A table that ran the whole batch on replica 0 gathers the
// same results.)
void requireEachReplicaRanItsRows(const DataParallelTable& table, const DeviceKind& kind, int devices, int64_t batch,
                                  const Activity& x, const Activity& g, uint64_t seed) {
  const int64_t used = std::min<int64_t>(batch, devices);
  int64_t start = 0;
  for (int64_t i = 0; i < used; ++i) {
    CAPTURE(i);
    const int64_t length = batch / used + (i < batch % used ? 1 : 0);
    const nn::Module& replica = *table.get(static_cast<size_t>(i));
    auto mine = tableNet(seed);
    const Activity myRows = rowsOf(x, start, length);
    REQUIRE(nn::sameShape(replica.outputActivity(), mine->forward(myRows)));
    REQUIRE(replica.outputActivity()[0].tensor().device() == kind.device(static_cast<int>(i)));
    REQUIRE(relDiff(replica.outputActivity(), mine->outputActivity()) < bound(kind, 1e-6));
    REQUIRE(relDiff(replica.gradInputActivity(), mine->backward(myRows, rowsOf(g, start, length))) < bound(kind, 1e-6));
    start += length;
  }
  REQUIRE(start == batch);
}

// The gradients of every parameter, the table's and the plain module's, agree within `within`.
void requireSameGradients(nn::Module& table, nn::Module& plain, double within) {
  auto [tv, tg] = table.parameters();
  auto [pv, pg] = plain.parameters();
  REQUIRE(tg.size() == pg.size());
  for (size_t i = 0; i < pg.size(); ++i) REQUIRE(relDiff(tg[i], pg[i]) < within);
}

}  // namespace

NN_MULTI_DEVICE_TEST_CASE("a table input and a table output: DataParallelTable equals the plain module",
                          "[DataParallelTable][tables]") {
  for (bool flatten : {true, false})
    for (int devices = 1; devices <= upTo(kind, 4); ++devices)
      for (int64_t batch : {1, 9, 15}) {
        CAPTURE(flatten, devices, batch);
        auto plain = tableNet(7);
        auto table = std::make_shared<DataParallelTable>(0, flatten, false);
        table->add(tableNet(7), kind.devices(devices));
        const Table x = tableInput(batch, 100 + static_cast<uint64_t>(batch));

        const Activity& expected = plain->forward(Activity(x));
        const Activity& out = table->forward(Activity(x));
        REQUIRE(out.isTable());
        REQUIRE(out[0].tensor().device() == kind.device(0));
        REQUIRE(out[1].tensor().device() == kind.device(0));
        REQUIRE(relDiff(out, expected) < bound(kind, 1e-6));

        const Table g{nn::test::randomTensor({batch, 4}, 5), nn::test::randomTensor({batch, 4}, 6)};
        plain->zeroGradParameters();
        table->zeroGradParameters();
        for (int pass = 0; pass < 2; ++pass) {  // gradients accumulate alike
          plain->backward(Activity(x), g);
          table->backward(Activity(x), g);
        }
        const Activity& gradInput = table->gradInputActivity();
        REQUIRE(nn::sameShape(gradInput, Activity(x)));
        REQUIRE(gradInput[1][0].tensor().device() == kind.device(0));
        REQUIRE(relDiff(gradInput, plain->gradInputActivity()) < bound(kind, 1e-6));
        requireSameGradients(*table, *plain, bound(kind, 1e-5));
        requireEachReplicaRanItsRows(*table, kind, devices, batch, Activity(x), g, 7);
      }
}

NN_MULTI_DEVICE_TEST_CASE("every tensor of a table is split along dim 1, and tables gathered along it",
                          "[DataParallelTable][tables]") {
  // No parameters: [2, N, 3] and [2, N, 5] through Tanh and MulConstant, then FlattenTable of a
  // ConcatTable, so the output is a table of three [2, N, *].
  auto makeNet = [] {
    auto parallel = std::make_shared<nn::ParallelTable>();
    parallel->add(std::make_shared<nn::Tanh>()).add(std::make_shared<nn::MulConstant>(-2.f));
    auto both = std::make_shared<nn::ConcatTable>();
    both->add(parallel).add(std::make_shared<nn::SelectTable>(0));
    auto net = std::make_shared<nn::Sequential>();
    net->add(both).add(std::make_shared<nn::FlattenTable>());
    return net;
  };
  for (int devices = 1; devices <= upTo(kind, 4); ++devices) {
    CAPTURE(devices);
    auto plain = makeNet();
    auto table = std::make_shared<DataParallelTable>(1);
    table->add(makeNet(), kind.devices(devices));
    const Table x{nn::test::randomTensor({2, 7, 3}, 1), nn::test::randomTensor({2, 7, 5}, 2)};
    const Activity& out = table->forward(Activity(x));
    REQUIRE(out.size() == 3);
    REQUIRE(out[2].tensor().sizes() == std::vector<int64_t>{2, 7, 3});
    REQUIRE(relDiff(out, plain->forward(Activity(x))) < bound(kind, 1e-6));
    const Table g{nn::test::randomTensor({2, 7, 3}, 3), nn::test::randomTensor({2, 7, 5}, 4),
                  nn::test::randomTensor({2, 7, 3}, 5)};
    REQUIRE(relDiff(table->backward(Activity(x), g), plain->backward(Activity(x), g)) < bound(kind, 1e-6));
  }
}

NN_MULTI_DEVICE_TEST_CASE("10 SGD steps through a ParallelCriterion give the plain module's parameters",
                          "[DataParallelTable][tables][ParallelCriterion]") {
  auto plain = tableNet(3);
  auto table = std::make_shared<DataParallelTable>(0);
  table->add(tableNet(3), kind.devices(upTo(kind, 3)));
  nn::SgdOptions options;
  options.learningRate = 0.05f;
  options.momentum = 0.9f;
  nn::SGD plainSgd(plain->getParameters(), options);
  nn::SGD tableSgd(table->getParameters(), options);
  const Tensor pw = plain->getParameters().first, tw = table->getParameters().first;
  const Tensor initial = pw.clone();
  nn::ParallelCriterion criterion;
  criterion.add(std::make_shared<nn::MSECriterion>(), 0.5f).add(std::make_shared<nn::MSECriterion>(), 2.f);
  for (int step = 0; step < 10; ++step) {
    const Table x = tableInput(11, 1000 + static_cast<uint64_t>(step) * 3);
    const Table y{nn::test::randomTensor({11, 4}, 50), nn::test::randomTensor({11, 4}, 51)};
    const Table yOnTable{kind.on(y[0].tensor()), kind.on(y[1].tensor())};

    plain->zeroGradParameters();
    const Activity& plainOut = plain->forward(Activity(x));
    const float plainLoss = criterion.forward(plainOut, y);
    plain->backward(Activity(x), criterion.backward(plainOut, y));
    plainSgd.step();

    table->zeroGradParameters();
    const Activity& tableOut = table->forward(Activity(x));
    const float tableLoss = criterion.forward(tableOut, yOnTable);
    table->backward(Activity(x), criterion.backward(tableOut, yOnTable));
    tableSgd.step();
    REQUIRE(tableLoss == Approx(plainLoss).epsilon(bound(kind, 1e-5)));
  }
  REQUIRE(relDiff(pw, initial) > 1e-2);  // training moved the parameters
  REQUIRE(relDiff(tw, pw) < bound(kind, 1e-5));
}

NN_MULTI_DEVICE_TEST_CASE("a table input whose tensors differ in rows along dim is refused, naming the sizes",
                          "[DataParallelTable][tables]") {
  auto table = std::make_shared<DataParallelTable>(0);
  table->add(tableNet(1), kind.devices(upTo(kind, 2)));
  const Table x{nn::test::randomTensor({6, 6}, 1),
                Table{nn::test::randomTensor({5, 3}, 2), nn::test::randomTensor({6, 3}, 3)}};
  REQUIRE_THROWS_WITH(table->forward(Activity(x)), Catch::Contains("nn.DataParallelTable") &&
                                                       Catch::Contains("[6, 6]") && Catch::Contains("[5, 3]"));
  // The table stays usable.
  const Table good = tableInput(6, 4);
  REQUIRE(table->forward(Activity(good)).size() == 2);
}

// Torch7's test_DataParallelTable_emptyTensor: {Tensor(0), Tensor(n, 10)} through
// Sequential(SelectTable(2), Linear(10, 2)) (SelectTable(1) here, indices from 0).
NN_MULTI_DEVICE_TEST_CASE("an empty tensor of a table input goes to every replica unsplit, as in Torch7",
                          "[DataParallelTable][tables]") {
  const int devices = upTo(kind, 2);
  auto net = [] {
    nn::manualSeed(3);
    return std::make_shared<nn::Sequential>(
        std::initializer_list<nn::ModulePtr>{nn::make<nn::SelectTable>(1), nn::make<nn::Linear>(10, 2)});
  };
  auto plain = net();
  auto table = std::make_shared<DataParallelTable>(0);
  table->add(net(), kind.devices(devices));
  const Table x{Tensor(), nn::test::randomTensor({2 * devices, 10}, 4)};
  const Activity& out = table->forward(Activity(x));
  REQUIRE(out.isTensor());
  REQUIRE(out.tensor().sizes() == std::vector<int64_t>{2 * devices, 2});
  REQUIRE(relDiff(out, plain->forward(Activity(x))) < bound(kind, 1e-6));
  const Tensor g = nn::test::randomTensor({2 * devices, 2}, 5);
  const Activity& gradInput = table->backward(Activity(x), Activity(g));
  plain->backward(Activity(x), Activity(g));
  REQUIRE(gradInput.isTable());
  REQUIRE(gradInput[0].tensor().numel() == 0);
  REQUIRE(relDiff(gradInput[1], plain->gradInputActivity()[1]) < bound(kind, 1e-6));
  requireSameGradients(*table, *plain, bound(kind, 1e-5));
  // An input of empty tensors alone has nothing to split.
  REQUIRE_THROWS_WITH(table->forward(Activity(Table{Tensor(), Tensor()})),
                      Catch::Contains("nn.DataParallelTable") && Catch::Contains("a tensor in the input to split"));
}
