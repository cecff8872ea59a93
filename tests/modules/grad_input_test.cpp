// setGradInputNeeded(false): backward skips gradInput where the input needs no gradient (a
// network's first layer), and every parameter gradient stays what it was; on every device type
// for single modules and containers, on logical CPU devices for DataParallelTable.
#include <catch2/catch.hpp>
#include <memory>
#include <vector>

#include "cunn/cunn.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using Catch::Contains;
using nn::Tensor;

namespace {

std::shared_ptr<nn::Sequential> smallNet(const nn::Device& device = nn::Device()) {
  nn::manualSeed(11);
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::SpatialConvolution>(2, 3, 3, 3));
  net->add(std::make_shared<nn::ReLU>());
  net->add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 3 * 4 * 4}));
  net->add(std::make_shared<nn::Linear>(3 * 4 * 4, 5));
  net->to(device);
  return net;
}

// The parameter gradients after one backward of `module` on `input`, from zero.
std::vector<std::vector<float>> gradientsOf(nn::Module& module, const Tensor& input) {
  module.zeroGradParameters();
  const Tensor& out = module.forward(input);
  module.backward(input, nn::test::randomTensor(out.sizes(), 3).to(out.device()));
  std::vector<std::vector<float>> out2;
  for (const Tensor& g : module.parameters().second) out2.push_back(g.toVector());
  return out2;
}

}  // namespace

NN_DEVICE_TEST_CASE("a leaf without gradInput leaves it empty and accumulates the same gradients", "[gradinput]") {
  nn::manualSeed(2);
  nn::Linear linear(4, 3);
  linear.to(kind.device());
  const Tensor input = kind.on(nn::test::randomTensor({5, 4}, 1));
  const auto expected = gradientsOf(linear, input);
  REQUIRE(linear.gradInput.hasSizes({5, 4}));
  linear.setGradInputNeeded(false);
  CHECK_FALSE(linear.gradInputNeeded());
  CHECK(gradientsOf(linear, input) == expected);
  CHECK(linear.gradInput.numel() == 0);
  // And back on: gradInput again.
  linear.setGradInputNeeded(true);
  gradientsOf(linear, input);
  CHECK(linear.gradInput.hasSizes({5, 4}));
}

NN_DEVICE_TEST_CASE("a Sequential without gradInput skips its first module's only", "[gradinput]") {
  auto net = smallNet(kind.device());
  const Tensor input = kind.on(nn::test::randomTensor({2, 2, 6, 6}, 1));
  const auto expected = gradientsOf(*net, input);
  net->setGradInputNeeded(false);
  CHECK_FALSE(net->get(0)->gradInputNeeded());
  CHECK(net->get(1)->gradInputNeeded());
  CHECK(gradientsOf(*net, input) == expected);
  CHECK(net->gradInput.numel() == 0);
  CHECK(net->get(0)->gradInput.numel() == 0);
  CHECK(net->get(1)->gradInput.hasSizes({2, 3, 4, 4}));  // the convolution's weight gradient needs it
  // A clone keeps the setting.
  auto copy = net->clone();
  CHECK_FALSE(copy->gradInputNeeded());
  CHECK_FALSE(copy->children()[0]->gradInputNeeded());
}

NN_DEVICE_TEST_CASE("behind modules without parameters, the first with parameters computes no gradInput either",
                    "[gradinput]") {
  // View, ReLU, Linear, Tanh, Linear: the setting goes through View and ReLU to the first
  // Linear, and stops there (its weight gradient needs the Tanh's gradInput).
  nn::manualSeed(4);
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 12}));
  net->add(std::make_shared<nn::ReLU>());
  net->add(std::make_shared<nn::Linear>(12, 6));
  net->add(std::make_shared<nn::Tanh>());
  net->add(std::make_shared<nn::Linear>(6, 3));
  net->to(kind.device());
  const Tensor input = kind.on(nn::test::randomTensor({4, 3, 4}, 1));
  const auto expected = gradientsOf(*net, input);
  REQUIRE(net->get(2)->gradInput.hasSizes({4, 12}));
  net->setGradInputNeeded(false);
  CHECK_FALSE(net->get(0)->gradInputNeeded());
  CHECK_FALSE(net->get(1)->gradInputNeeded());
  CHECK_FALSE(net->get(2)->gradInputNeeded());
  CHECK(net->get(3)->gradInputNeeded());
  CHECK(net->get(4)->gradInputNeeded());
  CHECK(gradientsOf(*net, input) == expected);
  CHECK(net->get(2)->gradInput.numel() == 0);
  CHECK(net->gradInput.numel() == 0);
  // A DataParallelTable's replicas take the same setting.
  auto copy = net->clone();
  CHECK_FALSE(copy->children()[2]->gradInputNeeded());
  // And back on: every module computes its gradInput again.
  net->setGradInputNeeded(true);
  for (const nn::ModulePtr& m : net->children()) CHECK(m->gradInputNeeded());
  CHECK(gradientsOf(*net, input) == expected);
  CHECK(net->gradInput.hasSizes({4, 3, 4}));
}

NN_DEVICE_TEST_CASE("a Sequential names the module that leaves its gradInput out above another", "[gradinput]") {
  auto net = smallNet(kind.device());
  net->get(3)->setGradInputNeeded(false);
  const Tensor input = kind.on(nn::test::randomTensor({2, 2, 6, 6}, 1));
  const Tensor& out = net->forward(input);
  CHECK_THROWS_WITH(net->backward(input, kind.on(nn::test::randomTensor(out.sizes(), 3))),
                    Contains("module (4) nn.Linear computes no gradInput") && Contains("module (3) below it"));
}

NN_DEVICE_TEST_CASE("a Concat without gradInput gives none and the branches' gradients stay", "[gradinput]") {
  nn::manualSeed(5);
  nn::Concat concat(1);
  concat.add(std::make_shared<nn::Linear>(4, 2));
  concat.add(std::make_shared<nn::Linear>(4, 3));
  concat.to(kind.device());
  const Tensor input = kind.on(nn::test::randomTensor({3, 4}, 1));
  const auto expected = gradientsOf(concat, input);
  concat.setGradInputNeeded(false);
  CHECK_FALSE(concat.get(1)->gradInputNeeded());
  CHECK(gradientsOf(concat, input) == expected);
  CHECK(concat.gradInput.numel() == 0);
}

TEST_CASE("a DataParallelTable whose replicas need no gradInput gathers none", "[gradinput]") {
  const Tensor input = nn::test::randomTensor({7, 2, 6, 6}, 1);
  auto plain = smallNet();
  const auto expected = gradientsOf(*plain, input);

  SECTION("set on the module before add") {
    auto net = smallNet();
    net->setGradInputNeeded(false);
    nn::DataParallelTable table(0, true, false);
    table.add(net, {nn::Device::cpu(0), nn::Device::cpu(1)});
    const auto got = gradientsOf(table, input);
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      const Tensor g = Tensor::fromVector({static_cast<int64_t>(got[i].size())}, got[i]);
      CHECK(nn::test::maxAbsDiff(g, expected[i]) <= 1e-5);  // float sums in another order
    }
    CHECK(table.gradInput.numel() == 0);
  }
  SECTION("set on the table after add, and back") {
    nn::DataParallelTable table(0, false, false);
    table.add(smallNet(), {nn::Device::cpu(0), nn::Device::cpu(1), nn::Device::cpu(2)});
    table.setGradInputNeeded(false);
    CHECK_FALSE(table.get(2)->children()[0]->gradInputNeeded());
    gradientsOf(table, input);
    CHECK(table.gradInput.numel() == 0);
    table.setGradInputNeeded(true);
    gradientsOf(table, input);
    CHECK(table.gradInput.hasSizes({7, 2, 6, 6}));
  }
}
