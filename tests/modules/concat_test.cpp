// nn::Concat: joining the children's outputs, summing their gradInputs and errors on every
// device type, printing, and the module on another device compared with the one on the host.
#include "nn/modules/Concat.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>

#include "nn/modules/Identity.h"
#include "nn/modules/Linear.h"
#include "nn/modules/ReLU.h"
#include "nn/modules/Sequential.h"
#include "nn/modules/Tanh.h"
#include "nn/modules/View.h"
#include "nn/tensor/Random.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

std::shared_ptr<nn::Linear> linearWith(const std::vector<float>& weight, const std::vector<float>& bias) {
  auto linear = std::make_shared<nn::Linear>(2, static_cast<int64_t>(bias.size()));
  linear->weight.copy_(Tensor::fromVector({static_cast<int64_t>(bias.size()), 2}, weight));
  linear->bias.copy_(Tensor::fromVector({static_cast<int64_t>(bias.size())}, bias));
  return linear;
}

// Concat(1) of Linear(4 -> 3), Sequential(Linear(4 -> 2), Tanh) and Identity, on `device`:
// output [N, 9].
std::shared_ptr<nn::Concat> branchyNet(const nn::Device& device) {
  nn::manualSeed(4);
  auto concat = std::make_shared<nn::Concat>(1);
  concat->add(std::make_shared<nn::Linear>(4, 3));
  auto branch = std::make_shared<nn::Sequential>();
  branch->add(std::make_shared<nn::Linear>(4, 2));
  branch->add(std::make_shared<nn::Tanh>());
  concat->add(branch);
  concat->add(std::make_shared<nn::Identity>());
  concat->to(device);
  return concat;
}

}  // namespace

NN_DEVICE_TEST_CASE("Concat joins outputs and sums gradInputs as computed by hand", "[Concat]") {
  nn::Concat concat(1);
  auto linear = linearWith({1, 2, 3, 4, 5, 6}, {0.5f, -1, 2});
  concat.add(linear).add(std::make_shared<nn::Identity>());
  concat.to(kind.device());
  const Tensor x = kind.on(Tensor::fromVector({2, 2}, {1, -1, 0, 2}));
  // Linear: row 1 [1-2+0.5, 3-4-1, 5-6+2], row 2 [0+4+0.5, 0+8-1, 0+12+2]; then the input itself.
  REQUIRE(nn::test::maxAbsDiff(concat.forward(x), {-0.5f, -2, 1, 1, -1, 4.5f, 7, 14, 0, 2}) == 0);
  REQUIRE(concat.output.sizes() == std::vector<int64_t>{2, 5});

  const Tensor g = kind.on(Tensor::fromVector({2, 5}, {1, 0, -1, 2, 3, 0, 1, 0, -1, 1}));
  concat.zeroGradParameters();
  concat.backward(x, g);
  // Linear gets g[:, 0:3] = [[1, 0, -1], [0, 1, 0]]: gradInput = g W = [[1-5, 2-6], [3, 4]].
  // Identity gets g[:, 3:5] = [[2, 3], [-1, 1]]. Their sum: [[-2, -1], [2, 5]].
  REQUIRE(nn::test::maxAbsDiff(concat.gradInput, {-2, -1, 2, 5}) == 0);
  // accGradParameters gave the Linear its slice: gradWeight = g^T x, gradBias = column sums.
  REQUIRE(nn::test::maxAbsDiff(linear->gradWeight, {1, -1, 0, 2, -1, 1}) == 0);
  REQUIRE(nn::test::maxAbsDiff(linear->gradBias, {1, 1, -1}) == 0);
  concat.backward(x, g, 0.5f);
  REQUIRE(nn::test::maxAbsDiff(linear->gradBias, {1.5f, 1.5f, -1.5f}) == 0);
}

NN_DEVICE_TEST_CASE("Concat joins along any dimension", "[Concat]") {
  SECTION("dimension 0 stacks the outputs") {
    nn::Concat concat(0);
    concat.add(linearWith({1, 0, 0, 1, 1, 1}, {0, 0, 0})).add(linearWith({1, -1}, {10}));
    concat.to(kind.device());
    // [1, 2] -> first [1, 2, 3], second [9]: joined [4].
    REQUIRE(nn::test::maxAbsDiff(concat.forward(kind.on(Tensor::fromVector({2}, {1, 2}))), {1, 2, 3, 9}) == 0);
    const Tensor x = kind.on(Tensor::fromVector({2, 2}, {1, 2, 3, 4}));
    // Batch rows [1, 2] and [3, 4]: first gives [[1, 2, 3], [3, 4, 7]], second can not join it.
    REQUIRE_THROWS_WITH(concat.forward(x), Catch::Contains("nn.Concat") && Catch::Contains("(2)") &&
                                               Catch::Contains("[*, 3]") && Catch::Contains("[2, 1]"));
  }
  SECTION("a middle dimension of a 4-D output") {
    nn::Concat concat(1);
    concat.add(std::make_shared<nn::Identity>()).add(std::make_shared<nn::Tanh>());
    const Tensor x = kind.on(nn::test::randomTensor({2, 3, 2, 2}, 1));
    REQUIRE(concat.forward(x).sizes() == std::vector<int64_t>{2, 6, 2, 2});
    // Read on the host; CUDA's tanhf is within 2 ulp, inside Approx's 100 float epsilons.
    const Tensor y = concat.output.to(nn::Device()), xHost = x.to(nn::Device());
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t w = 0; w < 2; ++w) {
            REQUIRE(y.at({n, c, h, w}) == xHost.at({n, c, h, w}));
            REQUIRE(y.at({n, c + 3, h, w}) == Approx(std::tanh(xHost.at({n, c, h, w}))));
          }
    REQUIRE_THAT(nn::test::checkInputGradient(concat, x), nn::test::AgreesWithin(1e-3));
  }
}

NN_DEVICE_TEST_CASE("Concat gradients agree with finite differences", "[Concat]") {
  auto concat = branchyNet(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({3, 4}, 2));
  REQUIRE(concat->forward(x).sizes() == std::vector<int64_t>{3, 9});
  REQUIRE_THAT(nn::test::checkInputGradient(*concat, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(*concat, x), nn::test::EachAgreesWithin(1e-3, 4));
}

NN_DEVICE_TEST_CASE("Concat errors name the child or the shapes", "[Concat]") {
  const Tensor x = Tensor::zeros({2, 4}, kind.device());
  SECTION("an error inside a child carries its position") {
    nn::Concat concat(1);
    concat.add(std::make_shared<nn::Identity>()).add(std::make_shared<nn::Linear>(5, 2));
    concat.to(kind.device());
    REQUIRE_THROWS_WITH(concat.forward(x), Catch::StartsWith("(2) nn.Linear(5 -> 2)") && Catch::Contains("[2, 4]"));
  }
  SECTION("outputs that differ outside the joined dimension") {
    nn::Concat concat(1);
    concat.add(std::make_shared<nn::Linear>(4, 3)).add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 2}));
    concat.to(kind.device());
    REQUIRE_THROWS_WITH(concat.forward(x), Catch::Contains("nn.Concat") && Catch::Contains("(2)") &&
                                               Catch::Contains("[2, *]") && Catch::Contains("[4, 2]"));
  }
  SECTION("a dimension the outputs do not have") {
    nn::Concat concat(2);
    concat.add(std::make_shared<nn::Identity>());
    REQUIRE_THROWS_WITH(concat.forward(x),
                        Catch::Contains("nn.Concat") && Catch::Contains("dimension 2") && Catch::Contains("[2, 4]"));
  }
  SECTION("a gradOutput of the wrong size") {
    auto concat = branchyNet(kind.device());
    concat->forward(x);
    REQUIRE_THROWS_WITH(concat->backward(x, Tensor::zeros({2, 8}, kind.device())),
                        Catch::Contains("nn.Concat") && Catch::Contains("[2, 9]") && Catch::Contains("[2, 8]"));
  }
  SECTION("no children") {
    REQUIRE_THROWS_WITH(nn::Concat(0).forward(x), Catch::Contains("nn.Concat") && Catch::Contains("empty"));
    REQUIRE_THROWS_AS(nn::Concat(-1), nn::Error);
  }
}

NN_DEVICE_TEST_CASE("Concat of a strided input equals that of its contiguous copy, without allocating later",
                    "[Concat]") {
  auto a = branchyNet(kind.device());
  auto b = branchyNet(kind.device());
  const Tensor strided = kind.on(nn::test::randomTensor({4, 3}, 3)).transpose(0, 1);
  const Tensor g = kind.on(nn::test::randomTensor({3, 9}, 4));
  REQUIRE(nn::test::maxAbsDiff(a->forward(strided), b->forward(strided.contiguous())) == 0);
  a->zeroGradParameters();
  b->zeroGradParameters();
  REQUIRE(nn::test::maxAbsDiff(a->backward(strided, g), b->backward(strided.contiguous(), g)) == 0);
  REQUIRE(nn::test::maxAbsDiff(a->getParameters().second, b->getParameters().second) == 0);

  const Tensor x = strided.contiguous();
  a->forward(x);
  a->backward(x, g);
  const int64_t allocations = nn::storageAllocationCount();
  a->forward(x);
  a->backward(x, g);
  REQUIRE(nn::storageAllocationCount() == allocations);
}

NN_DEVICE_TEST_CASE("Concat clones are deep, keep the dimension and compute the same", "[Concat]") {
  auto concat = branchyNet(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({2, 4}, 5));
  const std::vector<float> out = concat->forward(x).toVector();
  nn::ModulePtr copy = concat->clone();
  REQUIRE(std::dynamic_pointer_cast<nn::Concat>(copy)->dim() == 1);
  REQUIRE(copy->toString() == concat->toString());
  REQUIRE(copy->forward(x).toVector() == out);
  copy->getParameters().first.fill_(0);
  REQUIRE(concat->forward(x).toVector() == out);
  REQUIRE(copy->forward(x).toVector() != out);
}

TEST_CASE("Concat prints its children as branches, as Torch7 does", "[Concat]") {
  nn::Concat concat(1);
  auto branch = std::make_shared<nn::Sequential>();
  branch->add(std::make_shared<nn::Linear>(2, 3)).add(std::make_shared<nn::ReLU>());
  concat.add(std::make_shared<nn::Linear>(2, 3)).add(branch);
  REQUIRE(concat.toString() ==
          "nn.Concat {\n"
          "  input\n"
          "    |`-> (1): nn.Linear(2 -> 3)\n"
          "     `-> (2): nn.Sequential {\n"
          "           [input -> (1) -> (2) -> output]\n"
          "           (1): nn.Linear(2 -> 3)\n"
          "           (2): nn.ReLU\n"
          "         }\n"
          "     ... -> output\n"
          "}");
  // A block that is not the last child keeps the branch line going beside it.
  nn::Concat outer(0);
  outer.add(branch).add(std::make_shared<nn::ReLU>());
  REQUIRE(outer.toString() ==
          "nn.Concat {\n"
          "  input\n"
          "    |`-> (1): nn.Sequential {\n"
          "    |      [input -> (1) -> (2) -> output]\n"
          "    |      (1): nn.Linear(2 -> 3)\n"
          "    |      (2): nn.ReLU\n"
          "    |    }\n"
          "     `-> (2): nn.ReLU\n"
          "     ... -> output\n"
          "}");
}

NN_DEVICE_TEST_CASE("Concat on another device joins and splits as on the host", "[Concat]") {
  // Children without sums (ReLU, Identity): the joined output and the summed gradInput are
  // the same floats added in the same order, equal bit for bit. Every dimension of a 3-D
  // input: outer or inner of 1, and both larger; non-contiguous inputs on the compared device.
  const nn::Device device = kind.compared();
  const Tensor x = nn::test::randomTensor({4, 5, 3}, 121);
  for (int dim = 0; dim < 3; ++dim) {
    CAPTURE(dim);
    auto makeConcat = [dim] {
      auto concat = std::make_shared<nn::Concat>(dim);
      concat->add(std::make_shared<nn::ReLU>());
      concat->add(std::make_shared<nn::Identity>());
      concat->add(std::make_shared<nn::ReLU>());
      return concat;
    };
    auto reference = makeConcat(), tested = makeConcat();
    const std::vector<float> y = reference->forward(x).toVector();
    const Tensor& yOn = tested->forward(nn::test::stridedOn(x, device));
    REQUIRE(yOn.device() == device);
    REQUIRE(yOn.sizes() == reference->output.sizes());
    REQUIRE(yOn.toVector() == y);
    const Tensor g = nn::test::randomTensor(reference->output.sizes(), 122);
    REQUIRE(tested->backward(nn::test::stridedOn(x, device), nn::test::stridedOn(g, device)).toVector() ==
            reference->backward(x, g).toVector());
  }
}
