// The table modules (Torch7's, items and dimensions from 0): ConcatTable, ParallelTable,
// CAddTable, CSubTable, CMulTable, CDivTable, JoinTable, SplitTable, SelectTable, NarrowTable,
// FlattenTable and Identity on tables. Values by hand, finite differences of every input
// tensor and parameter, a residual block, errors that name the module and what it got, saving,
// loading, cloning and printing; on CPU devices and, where found, CUDA devices.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>

#include "nn/io/Serialize.h"
#include "nn/modules/CAddTable.h"
#include "nn/modules/CDivTable.h"
#include "nn/modules/CMulTable.h"
#include "nn/modules/CSubTable.h"
#include "nn/modules/ConcatTable.h"
#include "nn/modules/FlattenTable.h"
#include "nn/modules/Identity.h"
#include "nn/modules/JoinTable.h"
#include "nn/modules/Linear.h"
#include "nn/modules/MulConstant.h"
#include "nn/modules/NarrowTable.h"
#include "nn/modules/ParallelTable.h"
#include "nn/modules/ReLU.h"
#include "nn/modules/SelectTable.h"
#include "nn/modules/Sequential.h"
#include "nn/modules/SplitTable.h"
#include "nn/modules/Tanh.h"
#include "nn/tensor/Random.h"
#include "tests/support/ActivationChecks.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/support/TempDir.h"

using nn::Activity;
using nn::Table;
using nn::Tensor;
using nn::test::AgreesWithin;
using nn::test::DeviceKind;
using nn::test::EachAgreesWithin;

namespace {

Tensor on(const DeviceKind& kind, const std::vector<int64_t>& sizes, const std::vector<float>& values) {
  return kind.on(Tensor::fromVector(sizes, values));
}

// The values of item i of a table (on any device).
std::vector<float> item(const Activity& a, size_t i) { return a[i].tensor().toVector(); }

std::shared_ptr<nn::Linear> linearWith(const std::vector<float>& weight, const std::vector<float>& bias) {
  auto linear = std::make_shared<nn::Linear>(2, static_cast<int64_t>(bias.size()));
  linear->weight.copy_(Tensor::fromVector({static_cast<int64_t>(bias.size()), 2}, weight));
  linear->bias.copy_(Tensor::fromVector({static_cast<int64_t>(bias.size())}, bias));
  return linear;
}

// fb.resnet's basic block on vectors: ConcatTable(Linear, ReLU, Linear | Identity), CAddTable,
// ReLU. Tensor in, tensor out, a table in the middle. With addInPlace, CAddTable(true).
std::shared_ptr<nn::Sequential> residualBlock(int64_t width, const nn::Device& device, bool addInPlace = false) {
  nn::manualSeed(7);
  auto branch = std::make_shared<nn::Sequential>();
  branch->add(std::make_shared<nn::Linear>(width, width));
  branch->add(std::make_shared<nn::Tanh>());
  branch->add(std::make_shared<nn::Linear>(width, width));
  auto split = std::make_shared<nn::ConcatTable>();
  split->add(branch).add(std::make_shared<nn::Identity>());
  auto block = std::make_shared<nn::Sequential>();
  block->add(split).add(std::make_shared<nn::CAddTable>(addInPlace)).add(std::make_shared<nn::Tanh>());
  block->to(device);
  return block;
}

}  // namespace

// --- containers ---------------------------------------------------------------------------

NN_DEVICE_TEST_CASE("ConcatTable gives each branch the input and sums their gradInputs, as computed by hand",
                    "[ConcatTable]") {
  nn::ConcatTable concat;
  auto linear = linearWith({1, 2, 3, 4, 5, 6}, {0.5f, -1, 2});
  concat.add(linear).add(std::make_shared<nn::Identity>());
  concat.to(kind.device());
  const Tensor x = on(kind, {2, 2}, {1, -1, 0, 2});
  const Activity& y = concat.forward(Activity(x));
  REQUIRE(y.size() == 2);
  // Linear: row 1 [1-2+0.5, 3-4-1, 5-6+2], row 2 [0+4+0.5, 0+8-1, 0+12+2]; then x itself.
  REQUIRE(item(y, 0) == std::vector<float>{-0.5f, -2, 1, 4.5f, 7, 14});
  REQUIRE(item(y, 1) == std::vector<float>{1, -1, 0, 2});
  REQUIRE(y[0].tensor().device() == kind.device());

  const Table g{on(kind, {2, 3}, {1, 0, -1, 0, 1, 0}), on(kind, {2, 2}, {2, 3, -1, 1})};
  concat.zeroGradParameters();
  const Activity& gradInput = concat.backward(x, g);
  // g1 W = [[1-5, 2-6], [3, 4]], plus g2: [[-2, -1], [2, 5]].
  REQUIRE(gradInput.tensor().toVector() == std::vector<float>{-2, -1, 2, 5});
  REQUIRE(concat.gradInput.toVector() == std::vector<float>{-2, -1, 2, 5});
  // gradWeight = g1^T x, gradBias = g1's column sums.
  REQUIRE(linear->gradWeight.toVector() == std::vector<float>{1, -1, 0, 2, -1, 1});
  REQUIRE(linear->gradBias.toVector() == std::vector<float>{1, 1, -1});
  concat.backward(x, g, 0.5f);
  REQUIRE(linear->gradBias.toVector() == std::vector<float>{1.5f, 1.5f, -1.5f});
}

NN_DEVICE_TEST_CASE("ConcatTable on a table input sums the branches' gradInputs item by item", "[ConcatTable]") {
  nn::ConcatTable concat;
  concat.add(std::make_shared<nn::SelectTable>(0)).add(std::make_shared<nn::CAddTable>());
  const Table x{on(kind, {2}, {1, 2}), on(kind, {2}, {10, 20})};
  const Activity& y = concat.forward(x);
  REQUIRE(item(y, 0) == std::vector<float>{1, 2});
  REQUIRE(item(y, 1) == std::vector<float>{11, 22});
  // SelectTable's gradInput is {g1, 0}, CAddTable's {g2, g2}.
  const Activity& gradInput = concat.backward(x, Table{on(kind, {2}, {1, 1}), on(kind, {2}, {2, 3})});
  REQUIRE(item(gradInput, 0) == std::vector<float>{3, 4});
  REQUIRE(item(gradInput, 1) == std::vector<float>{2, 3});
}

NN_DEVICE_TEST_CASE(
    "ConcatTable sums its branches' gradInputs even where a later branch works on a shared gradient "
    "in place",
    "[ConcatTable]") {
  // ConcatTable(Identity, Sequential(Linear, ReLU(true))), then CAddTable(true): both branches get
  // the same gradient tensor, which the Identity returns as its gradInput and the in-place ReLU
  // then overwrites with its own. Against the same block with CAddTable(false), whose branches get
  // copies.
  auto blockWith = [&](bool inPlace) {
    nn::manualSeed(11);
    auto branch = std::make_shared<nn::Sequential>();
    branch->add(std::make_shared<nn::Linear>(4, 4)).add(std::make_shared<nn::ReLU>(true));
    auto split = std::make_shared<nn::ConcatTable>();
    split->add(std::make_shared<nn::Identity>()).add(branch);
    auto block = std::make_shared<nn::Sequential>();
    block->add(split).add(std::make_shared<nn::CAddTable>(inPlace));
    block->to(kind.device());
    return block;
  };
  const Tensor x = kind.on(nn::test::randomTensor({3, 4}, 12));
  const Tensor g = kind.on(nn::test::randomTensor({3, 4}, 13));
  auto copies = blockWith(false), shared = blockWith(true);
  // The block with copies first, in a statement of its own: the in-place CAddTable writes its sum
  // into its first input, the Identity's output, which is x (the two sides of == may run in
  // either order, and g++ for aarch64 runs the left one first).
  const std::vector<float> viaCopies = copies->forward(x).toVector();
  REQUIRE(shared->forward(x).toVector() == viaCopies);
  const std::vector<float> expected = copies->backward(x, g.clone()).toVector();
  REQUIRE(shared->backward(x, g.clone()).toVector() == expected);
  // The ReLU masked some of the gradient: the case is the one it claims to be.
  const std::vector<float> branch =
      std::dynamic_pointer_cast<nn::ConcatTable>(copies->get(0))->get(1)->outputActivity().tensor().toVector();
  REQUIRE(std::count(branch.begin(), branch.end(), 0.f) > 0);
}

NN_DEVICE_TEST_CASE("ParallelTable applies its i-th module to the i-th item", "[ParallelTable]") {
  nn::ParallelTable parallel;
  auto linear = linearWith({1, 2, 3, 4, 5, 6}, {0.5f, -1, 2});
  parallel.add(linear).add(std::make_shared<nn::MulConstant>(3.f));
  parallel.to(kind.device());
  const Table x{on(kind, {1, 2}, {1, -1}), on(kind, {3}, {1, 2, -4})};
  const Activity& y = parallel.forward(x);
  REQUIRE(item(y, 0) == std::vector<float>{-0.5f, -2, 1});
  REQUIRE(item(y, 1) == std::vector<float>{3, 6, -12});
  parallel.zeroGradParameters();
  const Activity& gradInput = parallel.backward(x, Table{on(kind, {1, 3}, {1, 0, -1}), on(kind, {3}, {1, 0, 2})});
  REQUIRE(item(gradInput, 0) == std::vector<float>{-4, -4});
  REQUIRE(item(gradInput, 1) == std::vector<float>{3, 0, 6});
  REQUIRE(linear->gradWeight.toVector() == std::vector<float>{1, -1, 0, 0, -1, 1});
  // backward(x, g, scale) adds scale times the gradients: 1 + 0.5 of them now. gradInput is not
  // scaled.
  const Activity& again = parallel.backward(x, Table{on(kind, {1, 3}, {1, 0, -1}), on(kind, {3}, {1, 0, 2})}, 0.5f);
  REQUIRE(item(again, 0) == std::vector<float>{-4, -4});
  REQUIRE(linear->gradWeight.toVector() == std::vector<float>{1.5f, -1.5f, 0, 0, -1.5f, 1.5f});
  REQUIRE(linear->gradBias.toVector() == std::vector<float>{1.5f, 0, -1.5f});
}

NN_DEVICE_TEST_CASE("ConcatTable and ParallelTable gradients agree with finite differences",
                    "[ConcatTable][ParallelTable]") {
  nn::manualSeed(3);
  auto concat = std::make_shared<nn::ConcatTable>();
  auto branch = std::make_shared<nn::Sequential>();
  branch->add(std::make_shared<nn::Linear>(4, 3)).add(std::make_shared<nn::Tanh>());
  concat->add(branch).add(std::make_shared<nn::Linear>(4, 2));
  auto parallel = std::make_shared<nn::ParallelTable>();
  parallel->add(std::make_shared<nn::Linear>(3, 2)).add(std::make_shared<nn::Tanh>());
  nn::Sequential net;
  net.add(concat).add(parallel).add(std::make_shared<nn::CMulTable>());
  net.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({3, 4}, 2));
  REQUIRE(net.forward(x).sizes() == std::vector<int64_t>{3, 2});
  REQUIRE_THAT(nn::test::checkInputGradient(net, x), AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(net, x), EachAgreesWithin(1e-3, 6));

  // A table input: ParallelTable's own.
  const Table pair{kind.on(nn::test::randomTensor({2, 3}, 4)), kind.on(nn::test::randomTensor({5}, 5))};
  REQUIRE_THAT(nn::test::checkInputGradients(*parallel, pair), EachAgreesWithin(1e-3, 2));
  REQUIRE_THAT(nn::test::checkParameterGradients(*parallel, pair), EachAgreesWithin(1e-3, 2));
}

NN_DEVICE_TEST_CASE("a residual block: the table in the middle, tensors outside", "[ConcatTable][CAddTable]") {
  auto block = residualBlock(5, kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({4, 5}, 6));
  // The block's output is tanh(branch(x) + x), computed here from the branch alone.
  auto split = std::dynamic_pointer_cast<nn::ConcatTable>(block->get(0));
  REQUIRE(split != nullptr);
  const Tensor branch = split->get(0)->forward(x).clone();
  const std::vector<float> xs = x.toVector(), bs = branch.toVector(), ys = block->forward(x).toVector();
  REQUIRE(ys.size() == xs.size());
  for (size_t i = 0; i < ys.size(); ++i) REQUIRE(ys[i] == Approx(std::tanh(bs[i] + xs[i])).margin(1e-6));
  REQUIRE_THAT(nn::test::checkInputGradient(*block, x), AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(*block, x), EachAgreesWithin(1e-3, 4));

  // With CAddTable(true) (fb.resnet's): the same floats each way, with no copy of the branch's
  // output nor of the gradient.
  auto inPlace = residualBlock(5, kind.device(), true);
  const Tensor g = kind.on(nn::test::randomTensor({4, 5}, 7));
  block->zeroGradParameters();
  inPlace->zeroGradParameters();
  REQUIRE(block->forward(x).toVector() == ys);
  const std::vector<float> gx = block->backward(x, g).toVector();
  REQUIRE(inPlace->forward(x).toVector() == ys);
  REQUIRE(inPlace->backward(x, g).toVector() == gx);
  REQUIRE(inPlace->getParameters().second.toVector() == block->getParameters().second.toVector());
  const Activity& sum = inPlace->get(1)->outputActivity();
  REQUIRE(sum.tensor().rawData() ==
          std::dynamic_pointer_cast<nn::ConcatTable>(inPlace->get(0))->get(0)->output.rawData());
  REQUIRE_THAT(nn::test::checkInputGradient(*inPlace, x), AgreesWithin(1e-3));
}

// --- element-wise ---------------------------------------------------------------------------

NN_DEVICE_TEST_CASE("CAddTable, CSubTable, CMulTable and CDivTable as computed by hand",
                    "[CAddTable][CSubTable][CMulTable][CDivTable]") {
  const Tensor a = on(kind, {3}, {1, 2, 3}), b = on(kind, {3}, {4, 5, 6}), c = on(kind, {3}, {-1, 0, 1});
  const Tensor g = on(kind, {3}, {1, 2, 3});
  SECTION("CAddTable: the sum; each item's gradient is gradOutput") {
    nn::CAddTable add;
    REQUIRE(add.forward(Table{a, b, c}).tensor().toVector() == std::vector<float>{4, 7, 10});
    REQUIRE(a.toVector() == std::vector<float>{1, 2, 3});  // the inputs as they were
    REQUIRE(b.toVector() == std::vector<float>{4, 5, 6});
    REQUIRE(add.forward(Table{b, c}).tensor().toVector() == std::vector<float>{3, 5, 7});
    REQUIRE(add.forward(Table{a, b, c}).tensor().toVector() == std::vector<float>{4, 7, 10});
    const Activity& gradInput = add.backward(Table{a, b, c}, g);
    for (size_t i = 0; i < 3; ++i) REQUIRE(item(gradInput, i) == std::vector<float>{1, 2, 3});
  }
  SECTION("CAddTable(true): the sum in input[0]; each item's gradient gradOutput itself") {
    nn::CAddTable add(true);
    REQUIRE(add.toString() == "nn.CAddTable(true)");
    const Tensor first = a.clone();
    const Tensor& sum = add.forward(Table{first, b, c}).tensor();
    REQUIRE(sum.rawData() == first.rawData());
    REQUIRE(first.toVector() == std::vector<float>{4, 7, 10});
    const Activity& gradInput = add.backward(Table{first, b, c}, g);
    for (size_t i = 0; i < 3; ++i) {
      REQUIRE(gradInput[i].tensor().rawData() == g.rawData());
      REQUIRE(item(gradInput, i) == std::vector<float>{1, 2, 3});
    }
    // Saved and loaded, in place still; a file written before the option existed loads the copying one.
    REQUIRE(nn::test::savedAndLoaded(add)->toString() == "nn.CAddTable(true)");
    REQUIRE(nn::createModule("nn.CAddTable", nn::Config())->toString() == "nn.CAddTable");
  }
  SECTION("CSubTable: the difference; gradients gradOutput and its negation") {
    nn::CSubTable sub;
    REQUIRE(sub.forward(Table{a, b}).tensor().toVector() == std::vector<float>{-3, -3, -3});
    const Activity& gradInput = sub.backward(Table{a, b}, g);
    REQUIRE(item(gradInput, 0) == std::vector<float>{1, 2, 3});
    REQUIRE(item(gradInput, 1) == std::vector<float>{-1, -2, -3});
  }
  SECTION("CMulTable: the product; each item's gradient the product of the others, zeros included") {
    nn::CMulTable mul;
    REQUIRE(mul.forward(Table{a, b, c}).tensor().toVector() == std::vector<float>{-4, 0, 18});
    const Activity& gradInput = mul.backward(Table{a, b, c}, g);
    REQUIRE(item(gradInput, 0) == std::vector<float>{-4, 0, 18});  // g b c
    REQUIRE(item(gradInput, 1) == std::vector<float>{-1, 0, 9});   // g a c
    REQUIRE(item(gradInput, 2) == std::vector<float>{4, 20, 54});  // g a b
  }
  SECTION("CDivTable: the quotient; gradients g / b and -g a / b^2") {
    nn::CDivTable div;
    REQUIRE(div.forward(Table{a, b}).tensor().toVector() == std::vector<float>{0.25f, 0.4f, 0.5f});
    // A gradOutput unlike either input at every position, so that a gradient computed from an
    // input in its place is wrong.
    const Tensor gd = on(kind, {3}, {2, -5, -3});
    const Activity& gradInput = div.backward(Table{a, b}, gd);
    REQUIRE(nn::test::maxAbsDiff(gradInput[0].tensor(), {0.5f, -1, -0.5f}) <= 1e-7);       // 2/4, -5/5, -3/6
    REQUIRE(nn::test::maxAbsDiff(gradInput[1].tensor(), {-0.125f, 0.4f, 0.25f}) <= 1e-7);  // -2/16, 10/25, 9/36
  }
}

NN_DEVICE_TEST_CASE("element-wise table gradients agree with finite differences",
                    "[CAddTable][CSubTable][CMulTable][CDivTable]") {
  // Seeds other than the checker's (GradCheckOptions::seed, 1, whose weights, the gradOutput, a
  // seed-1 input of the output's sizes would equal).
  const Tensor a = kind.on(nn::test::randomTensor({2, 3}, 11));
  const Tensor b = kind.on(nn::test::randomTensor({2, 3}, 12, 0.5f, 2.f));  // away from 0, for CDivTable
  const Tensor c = kind.on(nn::test::randomTensor({2, 3}, 13));
  nn::CAddTable add;
  REQUIRE_THAT(nn::test::checkInputGradients(add, Table{a, b, c}), EachAgreesWithin(1e-3, 3));
  nn::CSubTable sub;
  REQUIRE_THAT(nn::test::checkInputGradients(sub, Table{a, c}), EachAgreesWithin(1e-3, 2));
  nn::CMulTable mul;
  REQUIRE_THAT(nn::test::checkInputGradients(mul, Table{a, b, c}), EachAgreesWithin(1e-3, 3));
  nn::CDivTable div;
  REQUIRE_THAT(nn::test::checkInputGradients(div, Table{a, b}), EachAgreesWithin(2e-3, 2));
}

NN_DEVICE_TEST_CASE("element-wise tables take strided items as their contiguous copies", "[CMulTable][CAddTable]") {
  const Tensor a = nn::test::randomTensor({3, 4}, 1), b = nn::test::randomTensor({4, 3}, 2);
  const Tensor strided = kind.on(b).transpose(0, 1);
  nn::CMulTable x, y;
  REQUIRE(x.forward(Table{kind.on(a), strided}).tensor().toVector() ==
          y.forward(Table{kind.on(a), strided.contiguous()}).tensor().toVector());
  const Tensor g = kind.on(nn::test::randomTensor({3, 4}, 3));
  const Activity& gx = x.backward(Table{kind.on(a), strided}, g);
  const Activity& gy = y.backward(Table{kind.on(a), strided.contiguous()}, g);
  REQUIRE(item(gx, 0) == item(gy, 0));
  REQUIRE(item(gx, 1) == item(gy, 1));
  nn::CAddTable sum;  // its first two items summed in one pass, the strided one first
  const std::vector<float> bt = strided.contiguous().toVector(), av = a.toVector();
  std::vector<float> expected(av.size());
  for (size_t i = 0; i < av.size(); ++i) expected[i] = bt[i] + av[i];
  REQUIRE(sum.forward(Table{strided, kind.on(a)}).tensor().toVector() == expected);
}

// --- rearranging tables ---------------------------------------------------------------------

NN_DEVICE_TEST_CASE("JoinTable joins along a dimension and splits gradOutput back", "[JoinTable]") {
  nn::JoinTable join(1);
  const Table x{on(kind, {2, 2}, {1, 2, 3, 4}), on(kind, {2, 1}, {5, 6})};
  REQUIRE(join.forward(x).tensor().toVector() == std::vector<float>{1, 2, 5, 3, 4, 6});
  REQUIRE(join.output.sizes() == std::vector<int64_t>{2, 3});
  const Activity& gradInput = join.backward(x, on(kind, {2, 3}, {1, 2, 3, 4, 5, 6}));
  REQUIRE(item(gradInput, 0) == std::vector<float>{1, 2, 4, 5});
  REQUIRE(item(gradInput, 1) == std::vector<float>{3, 6});
  REQUIRE(gradInput[1].tensor().sizes() == std::vector<int64_t>{2, 1});

  nn::JoinTable rows(0);
  // A strided item: x[0] transposed, [[1, 3], [2, 4]], then [[5, 6]].
  REQUIRE(rows.forward(Table{x[0].tensor().transpose(0, 1), on(kind, {1, 2}, {5, 6})}).tensor().toVector() ==
          std::vector<float>{1, 3, 2, 4, 5, 6});
  REQUIRE_THAT(nn::test::checkInputGradients(join, x), EachAgreesWithin(1e-3, 2));
}

NN_DEVICE_TEST_CASE("JoinTable and SplitTable take Torch7's negative dimensions and nInputDims", "[JoinTable][SplitTable]") {
  const Table x{on(kind, {2, 2}, {1, 2, 3, 4}), on(kind, {2, 1}, {5, 6})};
  // -1, the last dimension, and 0 of samples of one dimension, which a 2-D input has after its batch,
  // are dimension 1 here; of 1-D samples alone, 0 is 0.
  for (const auto& joinPtr : {std::make_shared<nn::JoinTable>(-1), std::make_shared<nn::JoinTable>(0, 1)}) {
    nn::JoinTable& join = *joinPtr;
    CAPTURE(join.toString());
    REQUIRE(join.forward(x).tensor().toVector() == std::vector<float>{1, 2, 5, 3, 4, 6});
    const Activity& gradInput = join.backward(x, on(kind, {2, 3}, {1, 2, 3, 4, 5, 6}));
    REQUIRE(item(gradInput, 0) == std::vector<float>{1, 2, 4, 5});
    REQUIRE(item(gradInput, 1) == std::vector<float>{3, 6});
  }
  nn::JoinTable samples(0, 1);
  REQUIRE(samples.forward(Table{on(kind, {2}, {1, 2}), on(kind, {1}, {5})}).tensor().toVector() ==
          std::vector<float>{1, 2, 5});
  REQUIRE(nn::JoinTable(-2).forward(Table{x[0], x[0]}).tensor().sizes() == std::vector<int64_t>{4, 2});
  REQUIRE_THAT(nn::test::checkInputGradients(samples, Table{kind.on(nn::test::randomTensor({3, 2}, 4)),
                                                            kind.on(nn::test::randomTensor({3, 4}, 5))}),
               EachAgreesWithin(1e-3, 2));

  const Tensor y = on(kind, {2, 3}, {1, 2, 3, 4, 5, 6});
  for (const auto& splitPtr : {std::make_shared<nn::SplitTable>(-1), std::make_shared<nn::SplitTable>(0, 1)}) {
    nn::SplitTable& split = *splitPtr;
    CAPTURE(split.toString());
    const Activity& items = split.forward(Activity(y));
    REQUIRE(items.size() == 3);
    REQUIRE(item(items, 0) == std::vector<float>{1, 4});
    REQUIRE(item(items, 2) == std::vector<float>{3, 6});
    const Activity& gradInput =
        split.backward(Activity(y), Table{on(kind, {2}, {1, 1}), on(kind, {2}, {2, 2}), on(kind, {2}, {3, 3})});
    REQUIRE(gradInput.tensor().toVector() == std::vector<float>{1, 2, 3, 1, 2, 3});
  }
  // A sample of one dimension alone: split along its 0.
  REQUIRE(nn::SplitTable(0, 1).forward(Activity(on(kind, {3}, {7, 8, 9}))).size() == 3);
  nn::SplitTable fromEnd(-2);
  REQUIRE_THAT(nn::test::checkInputGradients(fromEnd, Activity(kind.on(nn::test::randomTensor({3, 2, 2}, 6)))),
               EachAgreesWithin(1e-3, 1));

  // Dimensions the input lacks, either way, name the module, the dimension and the input.
  REQUIRE_THROWS_WITH(nn::JoinTable(-3).forward(x), Catch::Contains("nn.JoinTable(dim=-3, nInputDims=-1)") &&
                                                         Catch::Contains("dimension -3") && Catch::Contains("[2, 2]"));
  REQUIRE_THROWS_WITH(nn::JoinTable(1, 1).forward(x), Catch::Contains("nn.JoinTable") && Catch::Contains("dimension 1") &&
                                                           Catch::Contains("after a batch dimension") &&
                                                           Catch::Contains("[2, 2]"));
  REQUIRE_THROWS_WITH(nn::SplitTable(-3).forward(Activity(y)),
                      Catch::Contains("nn.SplitTable(dim=-3, nInputDims=-1)") && Catch::Contains("[2, 3]"));
  REQUIRE_THROWS_WITH(nn::SplitTable(2, 1).forward(Activity(y)),
                      Catch::Contains("nn.SplitTable") && Catch::Contains("after a batch dimension"));

  // nInputDims is saved; a file written before it existed loads with -1.
  REQUIRE(nn::test::savedAndLoaded(samples)->toString() == "nn.JoinTable(dim=0, nInputDims=1)");
  nn::SplitTable batched(0, 2);
  REQUIRE(nn::test::savedAndLoaded(batched)->toString() == "nn.SplitTable(dim=0, nInputDims=2)");
  REQUIRE(nn::createModule("nn.JoinTable", nn::Config().set("dim", 1))->toString() == "nn.JoinTable(dim=1, nInputDims=-1)");
  REQUIRE(nn::createModule("nn.SplitTable", nn::Config().set("dim", 1))->toString() == "nn.SplitTable(dim=1, nInputDims=-1)");
}

NN_DEVICE_TEST_CASE("SplitTable splits along a dimension and stacks gradOutput back", "[SplitTable]") {
  nn::SplitTable split(1);
  const Tensor x = on(kind, {2, 3}, {1, 2, 3, 4, 5, 6});
  // Its output is a table: forward takes an nn::Activity (a tensor alone picks the tensor pass).
  const Activity& y = split.forward(Activity(x));
  REQUIRE(y.size() == 3);
  REQUIRE(item(y, 0) == std::vector<float>{1, 4});
  REQUIRE(item(y, 2) == std::vector<float>{3, 6});
  REQUIRE(y[1].tensor().sizes() == std::vector<int64_t>{2});
  const Activity& gradInput =
      split.backward(Activity(x), Table{on(kind, {2}, {1, 1}), on(kind, {2}, {2, 2}), on(kind, {2}, {3, 3})});
  REQUIRE(gradInput.tensor().toVector() == std::vector<float>{1, 2, 3, 1, 2, 3});
  // SplitTable then JoinTable along 0 of items [1, 2]: the transpose.
  nn::Sequential net;
  net.add(std::make_shared<nn::SplitTable>(1)).add(std::make_shared<nn::JoinTable>(0));
  REQUIRE(net.forward(x).toVector() == std::vector<float>{1, 4, 2, 5, 3, 6});
  REQUIRE_THAT(nn::test::checkInputGradients(split, Activity(kind.on(nn::test::randomTensor({3, 2, 2}, 7)))),
               EachAgreesWithin(1e-3, 1));
}

NN_DEVICE_TEST_CASE(
    "SelectTable passes one item on, counting back from the end when negative; the others' "
    "gradients are zeros",
    "[SelectTable]") {
  const Tensor a = on(kind, {2}, {1, 2}), b = on(kind, {1}, {3}), c = on(kind, {3}, {4, 5, 6});
  const Table x{a, Table{b, c}};
  nn::SelectTable first(0), last(-1);
  REQUIRE(first.forward(x).tensor().toVector() == std::vector<float>{1, 2});
  const Activity& y = last.forward(x);
  REQUIRE(y.isTable());
  REQUIRE(item(y, 1) == std::vector<float>{4, 5, 6});
  const Activity& gradInput = last.backward(x, Table{on(kind, {1}, {7}), on(kind, {3}, {8, 9, 10})});
  REQUIRE(item(gradInput, 0) == std::vector<float>{0, 0});
  REQUIRE(gradInput[1][0].tensor().toVector() == std::vector<float>{7});
  REQUIRE(gradInput[1][1].tensor().toVector() == std::vector<float>{8, 9, 10});
  const std::vector<nn::test::GradientCheck> checks = nn::test::checkInputGradients(first, Table{a, c});
  REQUIRE(checks.size() == 2);
  REQUIRE_THAT(checks[0], AgreesWithin(1e-3));
  REQUIRE(checks[1].largest == 0);  // the item not selected: no gradient either way
  REQUIRE(checks[1].error == 0);
}

NN_DEVICE_TEST_CASE("NarrowTable passes items [offset, offset + length) on, and gradOutput's back in their places",
                    "[NarrowTable]") {
  std::vector<Tensor> items;
  for (int i = 0; i < 4; ++i) items.push_back(on(kind, {2}, {float(i), float(10 * i)}));
  const Table x{items[0], items[1], items[2], items[3]};
  nn::NarrowTable middle(1, 2);
  const Activity& y = middle.forward(x);
  REQUIRE(y.size() == 2);
  REQUIRE(item(y, 0) == std::vector<float>{1, 10});
  REQUIRE(item(y, 1) == std::vector<float>{2, 20});
  const Activity& gradInput = middle.backward(x, Table{on(kind, {2}, {1, 2}), on(kind, {2}, {3, 4})});
  REQUIRE(gradInput.size() == 4);
  REQUIRE(item(gradInput, 0) == std::vector<float>{0, 0});
  REQUIRE(item(gradInput, 1) == std::vector<float>{1, 2});
  REQUIRE(item(gradInput, 2) == std::vector<float>{3, 4});
  REQUIRE(item(gradInput, 3) == std::vector<float>{0, 0});
}

NN_DEVICE_TEST_CASE("NarrowTable with negative arguments: forward, backward and finite differences", "[NarrowTable]") {
  // On 4 items: a negative offset counts from the end (-1 is item 3), a negative length ends
  // that many items before the end plus one (-1 reaches item 3).
  struct Case {
    int64_t offset, length;
    size_t first, count;  // the items it passes on
  };
  const std::vector<Case> cases{{0, -1, 0, 4}, {2, -1, 2, 2}, {-1, -1, 3, 1}, {-2, 1, 2, 1}, {-3, -1, 1, 3}};
  Table x;
  for (uint64_t i = 0; i < 4; ++i) x.push_back(kind.on(nn::test::randomTensor({2, 3}, 20 + i)));
  for (const Case& c : cases) {
    CAPTURE(c.offset, c.length);
    nn::NarrowTable narrow(c.offset, c.length);
    const Activity& y = narrow.forward(x);
    REQUIRE(y.size() == c.count);
    for (size_t i = 0; i < c.count; ++i) REQUIRE(item(y, i) == item(x, c.first + i));
    Table g;
    for (size_t i = 0; i < c.count; ++i) g.push_back(kind.on(nn::test::randomTensor({2, 3}, 40 + i)));
    const Activity& gradInput = narrow.backward(x, g);
    REQUIRE(gradInput.size() == 4);
    for (size_t i = 0; i < 4; ++i) {
      CAPTURE(i);
      const bool inside = i >= c.first && i < c.first + c.count;
      REQUIRE(item(gradInput, i) == (inside ? item(g, i - c.first) : std::vector<float>(6, 0.f)));
    }
    const std::vector<nn::test::GradientCheck> checks = nn::test::checkInputGradients(narrow, x);
    REQUIRE(checks.size() == 4);
    for (size_t i = 0; i < 4; ++i) {
      CAPTURE(i);
      if (i >= c.first && i < c.first + c.count) {
        REQUIRE_THAT(checks[i], AgreesWithin(1e-3));
      } else {  // an item not passed on: no gradient either way
        REQUIRE(checks[i].largest == 0);
        REQUIRE(checks[i].error == 0);
      }
    }
  }
}

NN_DEVICE_TEST_CASE("FlattenTable flattens nested tables depth first and nests gradOutput back", "[FlattenTable]") {
  const Tensor a = on(kind, {1}, {1}), b = on(kind, {1}, {2}), c = on(kind, {2}, {3, 4}), d = on(kind, {1}, {5});
  const Table x{a, Table{b, Table{c}}, d};
  nn::FlattenTable flatten;
  const Activity& y = flatten.forward(x);
  REQUIRE(y.size() == 4);
  REQUIRE(item(y, 2) == std::vector<float>{3, 4});
  REQUIRE(item(y, 3) == std::vector<float>{5});
  const Table g{on(kind, {1}, {-1}), on(kind, {1}, {-2}), on(kind, {2}, {-3, -4}), on(kind, {1}, {-5})};
  const Activity& gradInput = flatten.backward(x, g);
  REQUIRE(nn::sameShape(gradInput, x));
  REQUIRE(nn::test::activityValues(gradInput) == std::vector<float>{-1, -2, -3, -4, -5});
}

NN_DEVICE_TEST_CASE("Identity passes tables through, and gradOutput back", "[Identity]") {
  nn::Identity identity;
  const Table x{on(kind, {2}, {1, 2}), Table{on(kind, {1}, {3})}};
  REQUIRE(nn::test::activityValues(identity.forward(x)) == std::vector<float>{1, 2, 3});
  const Table g{on(kind, {2}, {4, 5}), Table{on(kind, {1}, {6})}};
  REQUIRE(nn::test::activityValues(identity.backward(x, g)) == std::vector<float>{4, 5, 6});
  REQUIRE_THROWS_WITH(identity.backward(x, Table{on(kind, {2}, {4, 5})}),
                      Catch::Contains("nn.Identity") && Catch::Contains("{[2], {[1]}}") && Catch::Contains("{[2]}"));
}

// --- errors ---------------------------------------------------------------------------------

NN_DEVICE_TEST_CASE("table modules reject inputs they cannot take, naming themselves and what they got",
                    "[ConcatTable][ParallelTable][CAddTable][JoinTable][SplitTable][SelectTable][NarrowTable]") {
  const Tensor x = Tensor::zeros({2, 3}, kind.device());
  REQUIRE_THROWS_WITH(nn::CAddTable().forward(Activity(x)), Catch::Contains("nn.CAddTable") &&
                                                                Catch::Contains("expected a table") &&
                                                                Catch::Contains("[2, 3]"));
  REQUIRE_THROWS_WITH(nn::CAddTable().forward(Table{x, Tensor::zeros({3, 2}, kind.device())}),
                      Catch::Contains("nn.CAddTable") && Catch::Contains("input[1]") && Catch::Contains("[2, 3]") &&
                          Catch::Contains("[3, 2]"));
  REQUIRE_THROWS_WITH(nn::CSubTable().forward(Table{x, x, x}),
                      Catch::Contains("nn.CSubTable") && Catch::Contains("2 tensors"));
  REQUIRE_THROWS_WITH(nn::JoinTable(1).forward(Table{x, Tensor::zeros({3, 3}, kind.device())}),
                      Catch::Contains("nn.JoinTable") && Catch::Contains("input[1]") && Catch::Contains("[3, 3]"));
  REQUIRE_THROWS_WITH(nn::SplitTable(2).forward(Activity(x)),
                      Catch::Contains("nn.SplitTable") && Catch::Contains("[2, 3]"));
  REQUIRE_THROWS_WITH(nn::SelectTable(2).forward(Table{x, x}),
                      Catch::Contains("nn.SelectTable") && Catch::Contains("no item 2"));
  REQUIRE_THROWS_WITH(nn::SelectTable(-3).forward(Table{x, x}), Catch::Contains("no item -3"));
  REQUIRE_THROWS_WITH(nn::NarrowTable(1, 2).forward(Table{x, x}),
                      Catch::Contains("nn.NarrowTable") && Catch::Contains("[1, 3)"));
  // A length of 0 is refused where the module is made, as Narrow refuses it.
  REQUIRE_THROWS_WITH(nn::NarrowTable(0, 0),
                      Catch::Contains("nn.NarrowTable(offset=0, length=0)") && Catch::Contains("length other than 0"));

  nn::ParallelTable parallel;
  parallel.add(std::make_shared<nn::Identity>()).add(std::make_shared<nn::Identity>());
  REQUIRE_THROWS_WITH(parallel.forward(Table{x}),
                      Catch::Contains("nn.ParallelTable") && Catch::Contains("2") && Catch::Contains("{[2, 3]}"));

  nn::ConcatTable concat;
  concat.add(std::make_shared<nn::Identity>()).add(std::make_shared<nn::Identity>());
  // Its output is a table: the tensor passes say so.
  REQUIRE_THROWS_WITH(concat.forward(x),
                      Catch::Contains("nn.ConcatTable") && Catch::Contains("table") && Catch::Contains("nn::Activity"));
  concat.forward(Activity(x));
  REQUIRE_THROWS_WITH(concat.backward(Activity(x), Table{x}),
                      Catch::Contains("nn.ConcatTable") && Catch::Contains("a table of 2"));
  // An error inside a branch carries its position.
  nn::ConcatTable broken;
  broken.add(std::make_shared<nn::Identity>()).add(std::make_shared<nn::Linear>(4, 2));
  REQUIRE_THROWS_WITH(broken.forward(Activity(x)), Catch::Contains("(2) nn.Linear(4 -> 2)"));
}

// --- copies ---------------------------------------------------------------------------------

NN_DEVICE_TEST_CASE("a tree of table modules prints, saves, loads and clones; tensors keep nested names",
                    "[ConcatTable][ParallelTable][JoinTable]") {
  nn::manualSeed(5);
  auto parallel = std::make_shared<nn::ParallelTable>();
  parallel->add(std::make_shared<nn::Linear>(4, 3)).add(std::make_shared<nn::Tanh>());
  auto concat = std::make_shared<nn::ConcatTable>();
  concat->add(std::make_shared<nn::Identity>()).add(std::make_shared<nn::Linear>(4, 4));
  auto model = std::make_shared<nn::Sequential>();
  model->add(concat).add(parallel).add(std::make_shared<nn::SelectTable>(-1)).add(residualBlock(4, nn::Device()));
  model->add(std::make_shared<nn::SplitTable>(1)).add(std::make_shared<nn::JoinTable>(0));
  model->to(kind.device());
  const std::string text = model->toString();
  CAPTURE(text);
  for (const char* name : {"nn.ConcatTable", "nn.ParallelTable", "nn.SelectTable(index=-1)", "nn.CAddTable",
                           "nn.SplitTable(dim=1, nInputDims=-1)", "nn.JoinTable(dim=0, nInputDims=-1)"})
    REQUIRE(text.find(name) != std::string::npos);

  const Tensor x = kind.on(nn::test::randomTensor({2, 4}, 9));
  const std::vector<float> y = model->forward(x).toVector();
  REQUIRE(y.size() == 8);
  for (const nn::ModulePtr& copy : {nn::test::savedAndLoaded(*model), model->clone()}) {
    REQUIRE(copy->toString() == text);
    copy->to(kind.device());
    REQUIRE(copy->forward(x).toVector() == y);
  }

  // The names PyTorch gives a Sequential of nested module lists: index paths.
  nn::test::TempDir dir;
  nn::save(*model, dir.file("tree.safetensors"));
  std::vector<std::string> names;
  for (const nn::NamedTensor& t : nn::readSafetensors(dir.file("tree.safetensors")).tensors) names.push_back(t.name);
  for (const char* name : {"0.1.weight", "0.1.bias", "1.0.weight", "1.0.bias", "3.0.0.0.weight", "3.0.0.2.bias"}) {
    CAPTURE(name);
    REQUIRE(std::find(names.begin(), names.end(), name) != names.end());
  }
}
