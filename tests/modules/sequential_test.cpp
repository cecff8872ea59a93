// nn::Sequential: managing the children and printing; chaining forward and backward, errors
// and numerics checks on every device type.
#include "nn/modules/Sequential.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "nn/core/Numerics.h"
#include "nn/modules/BatchNormalization.h"
#include "nn/modules/ConcatTable.h"
#include "nn/modules/Dropout.h"
#include "nn/modules/Identity.h"
#include "nn/modules/Linear.h"
#include "nn/modules/LogSoftMax.h"
#include "nn/modules/ReLU.h"
#include "nn/modules/Tanh.h"
#include "nn/modules/View.h"
#include "nn/tensor/Random.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

// Linear(2 -> 3) with W = [[1, 2], [3, 4], [5, 6]], b = [0.5, -1, 2], then ReLU.
std::shared_ptr<nn::Sequential> linearRelu() {
  auto linear = std::make_shared<nn::Linear>(2, 3);
  linear->weight.copy_(Tensor::fromVector({3, 2}, {1, 2, 3, 4, 5, 6}));
  linear->bias.copy_(Tensor::fromVector({3}, {0.5f, -1, 2}));
  auto net = std::make_shared<nn::Sequential>();
  net->add(linear).add(std::make_shared<nn::ReLU>());
  return net;
}

// The layout of Torch7's LeNet, with a View and fully connected layers in place of the
// convolutions, and its 8th module Linear(800 -> 500). `hidden` is the output size of module
// (4); anything but 800 feeds module (8) a wrong shape. On `device`.
std::shared_ptr<nn::Sequential> leNetLike(int64_t hidden, const nn::Device& device) {
  nn::manualSeed(1);
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 784}))
      .add(std::make_shared<nn::Linear>(784, 1000))
      .add(std::make_shared<nn::ReLU>())
      .add(std::make_shared<nn::Linear>(1000, hidden))
      .add(std::make_shared<nn::Tanh>())
      .add(std::make_shared<nn::Dropout>(0.5f))
      .add(std::make_shared<nn::Identity>())
      .add(std::make_shared<nn::Linear>(800, 500))
      .add(std::make_shared<nn::ReLU>())
      .add(std::make_shared<nn::Linear>(500, 10))
      .add(std::make_shared<nn::LogSoftMax>());
  net->to(device);
  return net;
}

}  // namespace

TEST_CASE("Sequential add, get, size, insert and remove keep the children in order", "[Sequential]") {
  nn::Sequential net;
  REQUIRE(net.size() == 0);
  auto a = std::make_shared<nn::ReLU>();
  auto b = std::make_shared<nn::Tanh>();
  auto c = std::make_shared<nn::Identity>();
  net.add(a).add(b);
  REQUIRE(net.size() == 2);
  REQUIRE(net.get(0) == a);
  REQUIRE(net.get(1) == b);
  net.insert(c, 1);  // before b
  REQUIRE(net.size() == 3);
  REQUIRE(net.get(1) == c);
  REQUIRE(net.get(2) == b);
  net.insert(c, 3);  // at the end
  REQUIRE(net.get(3) == c);
  net.remove(0);
  REQUIRE(net.size() == 3);
  REQUIRE(net.get(0) == c);
  REQUIRE(net.get(1) == b);
  REQUIRE(net.children() == std::vector<nn::ModulePtr>{c, b, c});
  REQUIRE_THROWS_WITH(net.get(3), Catch::Contains("nn.Sequential") && Catch::Contains("3"));
  REQUIRE_THROWS_WITH(net.insert(a, 5), Catch::Contains("nn.Sequential") && Catch::Contains("5"));
  REQUIRE_THROWS_WITH(net.remove(3), Catch::Contains("nn.Sequential") && Catch::Contains("3"));
  REQUIRE_THROWS_AS(net.add(nullptr), nn::Error);
}

TEST_CASE("A container refuses itself and a module that holds it", "[Sequential]") {
  auto inner = std::make_shared<nn::Sequential>(std::vector<nn::ModulePtr>{std::make_shared<nn::Tanh>()});
  auto net = std::make_shared<nn::Sequential>(std::vector<nn::ModulePtr>{std::make_shared<nn::Linear>(3, 3), inner});
  // Forward would call itself without end.
  CHECK_THROWS_WITH(net->add(net), Catch::Contains("nn.Sequential.add: the nn.Sequential to add is this "
                                                   "nn.Sequential or holds it"));
  CHECK_THROWS_WITH(inner->add(net), Catch::Contains("nn.Sequential.add") && Catch::Contains("or holds it"));
  CHECK_THROWS_WITH(inner->insert(net, 0), Catch::Contains("nn.Sequential.insert") && Catch::Contains("or holds it"));
  nn::ConcatTable table;
  auto holder = std::make_shared<nn::Sequential>();
  table.add(holder);
  // A module that shares a child with the table does not hold the table: no cycle (a module
  // in two places is allowed, as in Torch7).
  auto outer = std::make_shared<nn::Sequential>(std::vector<nn::ModulePtr>{holder});
  CHECK_NOTHROW(table.add(outer));
  CHECK(table.size() == 2);
  // The refused calls added nothing, and the network still runs.
  CHECK(net->size() == 2);
  CHECK(inner->size() == 1);
  CHECK(net->forward(Tensor::zeros({2, 3})).sizes() == std::vector<int64_t>{2, 3});
}

TEST_CASE("Sequential from an initializer list or a vector of modules holds them in order", "[Sequential]") {
  auto linear = std::make_shared<nn::Linear>(3, 2);
  auto relu = std::make_shared<nn::ReLU>();
  nn::Sequential listed{linear, relu};
  REQUIRE(listed.size() == 2);
  CHECK(listed.get(0) == linear);
  CHECK(listed.get(1) == relu);
  auto made = std::make_shared<nn::Sequential>(std::vector<nn::ModulePtr>{relu, linear});
  REQUIRE(made->size() == 2);
  CHECK(made->get(0) == relu);
  CHECK_THROWS_WITH((nn::Sequential{linear, nullptr}), Catch::Contains("nn.Sequential.add: expected a module"));
  // clone and nn::load rebuild through the same constructor.
  CHECK(made->clone()->toString() == made->toString());
  // nn::make<T>(arguments): a shared module of T's own type, added like any other.
  const std::shared_ptr<nn::Linear> made3x4 = nn::make<nn::Linear>(3, 4);
  nn::Sequential fromMake{made3x4, nn::make<nn::ReLU>()};
  fromMake.add(nn::make<nn::Linear>(4, 1));
  CHECK(made3x4->weight.sizes() == std::vector<int64_t>{4, 3});
  CHECK(fromMake.size() == 3);
  CHECK(fromMake.get(0) == made3x4);
  CHECK(fromMake.forward(Tensor::zeros({2, 3})).sizes() == std::vector<int64_t>{2, 1});
}

TEST_CASE("Sequential prints Torch7's block", "[Sequential]") {
  auto net = linearRelu();
  REQUIRE(net->toString() ==
          "nn.Sequential {\n  [input -> (1) -> (2) -> output]\n  (1): nn.Linear(2 -> 3)\n  (2): nn.ReLU\n}");
  nn::Sequential outer;
  outer.add(net).add(std::make_shared<nn::Tanh>());
  REQUIRE(outer.toString() ==
          "nn.Sequential {\n"
          "  [input -> (1) -> (2) -> output]\n"
          "  (1): nn.Sequential {\n"
          "    [input -> (1) -> (2) -> output]\n"
          "    (1): nn.Linear(2 -> 3)\n"
          "    (2): nn.ReLU\n"
          "  }\n"
          "  (2): nn.Tanh\n"
          "}");
}

NN_DEVICE_TEST_CASE("Sequential chains forward and backward as computed by hand", "[Sequential]") {
  auto net = linearRelu();
  net->to(kind.device());
  const Tensor x = kind.on(Tensor::fromVector({2, 2}, {1, -1, 0, 2}));
  // Linear gives [[-0.5, -2, 1], [4.5, 7, 14]]; ReLU zeroes the negatives.
  REQUIRE(nn::test::maxAbsDiff(net->forward(x), {0, 0, 1, 4.5f, 7, 14}) == 0);
  // With gradOutput ones, ReLU passes [[0, 0, 1], [1, 1, 1]]; times W: [[5, 6], [1+3+5, 2+4+6]].
  net->zeroGradParameters();
  REQUIRE(nn::test::maxAbsDiff(net->backward(x, Tensor::full({2, 3}, 1.f, kind.device())), {5, 6, 9, 12}) == 0);
  // gradBias = column sums of what ReLU passed.
  const auto linear = std::dynamic_pointer_cast<nn::Linear>(net->get(0));
  REQUIRE(nn::test::maxAbsDiff(linear->gradBias, {1, 1, 2}) == 0);
  // backward(x, g, scale) adds scale times the gradients: 1 + 0.5 of them now. gradInput is not
  // scaled. gradWeight = what ReLU passed, transposed, times x: [[0, 2], [0, 2], [1, 1]].
  REQUIRE(nn::test::maxAbsDiff(net->backward(x, Tensor::full({2, 3}, 1.f, kind.device()), 0.5f), {5, 6, 9, 12}) == 0);
  REQUIRE(nn::test::maxAbsDiff(linear->gradBias, {1.5f, 1.5f, 3}) == 0);
  REQUIRE(nn::test::maxAbsDiff(linear->gradWeight, {0, 3, 0, 3, 1.5f, 1.5f}) == 0);
}

NN_DEVICE_TEST_CASE("Sequential gradients agree with finite differences through every kind of module", "[Sequential]") {
  nn::manualSeed(2);
  nn::Sequential net;
  net.add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 6}))
      .add(std::make_shared<nn::Linear>(6, 4))
      .add(std::make_shared<nn::Tanh>())
      .add(std::make_shared<nn::Linear>(4, 3))
      .add(std::make_shared<nn::LogSoftMax>());
  net.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({2, 2, 3}, 3));
  REQUIRE(net.forward(x).sizes() == std::vector<int64_t>{2, 3});
  REQUIRE_THAT(nn::test::checkInputGradient(net, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(net, x), nn::test::EachAgreesWithin(1e-3, 4));
}

NN_DEVICE_TEST_CASE("An empty Sequential refuses to run", "[Sequential]") {
  nn::Sequential net;
  REQUIRE_THROWS_WITH(net.forward(Tensor::zeros({2}, kind.device())),
                      Catch::Contains("nn.Sequential") && Catch::Contains("empty"));
  REQUIRE_THROWS_WITH(net.backward(Tensor::zeros({2}, kind.device()), Tensor::zeros({2}, kind.device())),
                      Catch::Contains("nn.Sequential"));
}

NN_DEVICE_TEST_CASE("An error inside a child carries the child's position", "[Sequential]") {
  const Tensor x = kind.on(nn::test::randomTensor({4, 1, 28, 28}, 4));
  // Sized right, the net runs.
  REQUIRE(leNetLike(800, kind.device())->forward(x).sizes() == std::vector<int64_t>{4, 10});
  // Module (4) gives 600 features where (8) takes 800.
  auto net = leNetLike(600, kind.device());
  REQUIRE(net->get(7)->toString() == "nn.Linear(800 -> 500)");
  REQUIRE_THROWS_WITH(net->forward(x), Catch::StartsWith("(8) nn.Linear(800 -> 500)") && Catch::Contains("[4, 600]"));
  // Nested, each level adds its position in front.
  nn::Sequential outer;
  outer.add(std::make_shared<nn::Identity>()).add(net);
  REQUIRE_THROWS_WITH(outer.forward(x), Catch::StartsWith("(2) (8) nn.Linear(800 -> 500)"));
  // The backward of a child names it too.
  auto good = leNetLike(800, kind.device());
  good->forward(x);
  REQUIRE_THROWS_WITH(good->backward(x, Tensor::zeros({4, 9}, kind.device())), Catch::StartsWith("(11) nn.LogSoftMax"));
}

NN_DEVICE_TEST_CASE("Sequential of a strided input equals that of its contiguous copy; clones are independent",
                    "[Sequential]") {
  auto net = linearRelu();
  net->to(kind.device());
  const Tensor strided = kind.on(nn::test::randomTensor({2, 5}, 5)).transpose(0, 1);
  const std::vector<float> out = net->forward(strided.contiguous()).toVector();
  REQUIRE(net->forward(strided).toVector() == out);
  nn::ModulePtr copy = net->clone();
  REQUIRE(copy->toString() == net->toString());
  REQUIRE(copy->forward(strided).toVector() == out);
  copy->getParameters().first.fill_(0);
  REQUIRE(net->forward(strided).toVector() == out);
}

NN_DEVICE_TEST_CASE("numerics checks name the module and pass of the first NaN or Inf", "[Sequential][numerics]") {
  nn::manualSeed(1);
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Linear>(3, 4));
  net->add(std::make_shared<nn::ReLU>());
  net->add(std::make_shared<nn::Linear>(4, 2));
  net->to(kind.device());
  // Element 5 of the last Linear's weight, on any device.
  Tensor weight5 = std::dynamic_pointer_cast<nn::Linear>(net->get(2))->weight.view({-1}).narrow(0, 5, 1);
  const Tensor x = kind.on(Tensor::fromVector({1, 3}, {1, 2, 3}));
  weight5.fill_(NAN);
  // Off: the NaN passes through silently, as in Torch7.
  REQUIRE_NOTHROW(net->forward(x));
  nn::setCheckNumerics(true);
  REQUIRE_THROWS_WITH(net->forward(x), Catch::StartsWith("(3) nn.Linear(4 -> 2): forward produced NaN"));
  weight5.fill_(0.5f);
  net->forward(x);
  REQUIRE_THROWS_WITH(net->backward(x, kind.on(Tensor::fromVector({1, 2}, {1, INFINITY}))),
                      Catch::StartsWith("(3) nn.Linear(4 -> 2): backward produced") && Catch::Contains("Inf"));
  nn::setCheckNumerics(false);
}

namespace {

// A module that offers to take the passes of an Identity after it (Module::canTakeNext), and
// records when it is asked to and what each pass saw.
class Taker : public nn::Module {
 public:
  bool canTakeNext(const nn::Module& next) const override { return dynamic_cast<const nn::Identity*>(&next) != nullptr; }
  void takeNext(nn::Module&, bool taken) override {
    events.push_back(taken ? "take" : "release");
    taking_ = taken;
  }
  const Tensor& updateOutput(const Tensor& input) override {
    events.push_back(taking_ ? "forward, taking" : "forward");
    output = input;
    return output;
  }
  const Tensor& updateGradInput(const Tensor&, const Tensor& gradOutput) override {
    events.push_back(taking_ ? "gradInput, taking" : "gradInput");
    gradInput = gradOutput;
    return gradInput;
  }
  void accGradParameters(const Tensor&, const Tensor&, float) override {
    events.push_back(taking_ ? "gradParameters, taking" : "gradParameters");
  }
  std::string typeName() const override { return "test.Taker"; }

  std::vector<std::string> events;

 private:
  bool taking_ = false;
};

}  // namespace

TEST_CASE("Sequential lets a module take the next one's passes where it offers to, around each pass only",
          "[Sequential]") {
  const Tensor x = Tensor::fromVector({2}, {1.f, -2.f});
  auto taker = std::make_shared<Taker>();
  nn::Sequential pair{taker, std::make_shared<nn::Identity>()};
  pair.forward(x);
  pair.backward(x, x);
  REQUIRE(taker->events == std::vector<std::string>{"take", "forward, taking", "release", "take", "gradInput, taking",
                                                    "release", "take", "gradParameters, taking", "release"});
  // Followed by a module it does not take, or by none: its passes alone.
  auto alone = std::make_shared<Taker>();
  nn::Sequential others{alone, std::make_shared<nn::Tanh>()};
  others.forward(x);
  nn::Sequential last{std::make_shared<nn::Identity>(), alone};
  last.forward(x);
  REQUIRE(alone->events == std::vector<std::string>{"forward", "forward"});
  // The library's own pair: a batch normalisation takes an in-place ReLU, not one out of place.
  nn::BatchNormalization bn(3);
  REQUIRE(bn.canTakeNext(nn::ReLU(true)));
  REQUIRE_FALSE(bn.canTakeNext(nn::ReLU(false)));
  REQUIRE_FALSE(nn::ReLU(true).canTakeNext(nn::ReLU(true)));
}
