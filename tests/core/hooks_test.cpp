// Module hooks (nn/core/Hooks.h): forward pre-hooks, forward hooks and backward hooks on a module
// alone and inside containers, with what they see against the module's own tensors; removal by
// handle; a hook that throws leaves the module usable; on every device type.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "nn/nn.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Activity;
using nn::Tensor;

namespace {

std::shared_ptr<nn::Sequential> smallNet(const nn::test::DeviceKind& kind) {
  nn::manualSeed(3);
  auto net = std::make_shared<nn::Sequential>(std::vector<nn::ModulePtr>{
      nn::make<nn::Linear>(5, 4), nn::make<nn::Tanh>(), nn::make<nn::Linear>(4, 3), nn::make<nn::LogSoftMax>()});
  net->to(kind.device());
  return net;
}

}  // namespace

NN_DEVICE_TEST_CASE("Forward hooks see a child's input and output, for feature extraction", "[hooks]") {
  auto net = smallNet(kind);
  nn::Module& hidden = *net->get(1);  // the Tanh
  std::vector<std::string> order;
  Tensor features, seenInput;
  nn::HookHandle pre = hidden.registerForwardPreHook([&](nn::Module& m, const Activity& in) {
    order.push_back("pre " + m.typeName());
    seenInput = in.tensor().clone();
  });
  nn::HookHandle post = hidden.registerForwardHook([&](nn::Module& m, const Activity&, const Activity& out) {
    order.push_back("post " + m.typeName());
    features = out.tensor().clone();
  });
  const Tensor x = kind.on(nn::test::randomTensor({6, 5}, 1));
  net->forward(x);
  CHECK(order == std::vector<std::string>{"pre nn.Tanh", "post nn.Tanh"});
  CHECK(nn::test::maxAbsDiff(features, hidden.output) == 0);
  CHECK(nn::test::maxAbsDiff(seenInput, net->get(0)->output) == 0);
  // Removed, they run no more; removing twice does nothing.
  pre.remove();
  post.remove();
  post.remove();
  net->forward(x);
  CHECK(order.size() == 2);
}

NN_DEVICE_TEST_CASE("Backward hooks see gradInput and gradOutput, for gradient statistics", "[hooks]") {
  auto net = smallNet(kind);
  nn::Module& last = *net->get(2);  // the second Linear
  double gradOutputNorm = -1;
  Tensor seenGradInput;
  int calls = 0;
  last.registerBackwardHook([&](nn::Module&, const Activity& gradInput, const Activity& gradOutput) {
    ++calls;
    seenGradInput = gradInput.tensor().clone();
    const std::vector<float> g = gradOutput.tensor().toVector();
    gradOutputNorm = 0;
    for (float v : g) gradOutputNorm += double{v} * v;
  });
  // And on the top module itself, which forward() and backward() run.
  int topCalls = 0;
  net->registerForwardHook([&](nn::Module&, const Activity&, const Activity&) { ++topCalls; });
  net->registerBackwardHook([&](nn::Module&, const Activity&, const Activity&) { ++topCalls; });
  const Tensor x = kind.on(nn::test::randomTensor({6, 5}, 2));
  const Tensor g = kind.on(nn::test::randomTensor({6, 3}, 3));
  net->forward(x);
  net->backward(x, g);
  CHECK(calls == 1);
  CHECK(topCalls == 2);
  CHECK(nn::test::maxAbsDiff(seenGradInput, last.gradInput) == 0);
  CHECK(gradOutputNorm > 0);
}

NN_DEVICE_TEST_CASE("A hook that throws stops the pass, and the module stays usable", "[hooks]") {
  auto net = smallNet(kind);
  const Tensor x = kind.on(nn::test::randomTensor({6, 5}, 4));
  const Tensor expected = net->forward(x).clone();
  nn::HookHandle failing = net->get(0)->registerForwardHook(
      [](nn::Module&, const Activity&, const Activity&) { throw nn::Error("hook: stop here"); });
  CHECK_THROWS_WITH(net->forward(x), Catch::Contains("hook: stop here"));
  failing.remove();
  CHECK(nn::test::maxAbsDiff(net->forward(x), expected) == 0);
  CHECK_THROWS_WITH(net->registerForwardHook(nn::ForwardHook()), Catch::Contains("expected a function"));
}

NN_DEVICE_TEST_CASE("Hooks on a module of tables see the tables", "[hooks]") {
  auto branches = std::make_shared<nn::ConcatTable>();
  branches->add(nn::make<nn::Identity>());
  branches->add(nn::make<nn::Tanh>());
  auto net = std::make_shared<nn::Sequential>(std::vector<nn::ModulePtr>{branches, nn::make<nn::CAddTable>()});
  net->to(kind.device());
  size_t items = 0;
  branches->registerForwardHook([&](nn::Module&, const Activity&, const Activity& out) { items = out.size(); });
  size_t gradItems = 0;
  net->get(1)->registerBackwardHook(
      [&](nn::Module&, const Activity& gradInput, const Activity&) { gradItems = gradInput.size(); });
  const Tensor x = kind.on(nn::test::randomTensor({2, 3}, 5));
  net->forward(x);
  net->backward(x, kind.on(nn::test::randomTensor({2, 3}, 6)));
  CHECK(items == 2);
  CHECK(gradItems == 2);
}
