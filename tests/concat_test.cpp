// nn::Concat: joining the children's outputs, summing their gradInputs, printing, errors.
#include "nn/Concat.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "nn/Identity.h"
#include "nn/Linear.h"
#include "nn/Random.h"
#include "nn/ReLU.h"
#include "nn/Sequential.h"
#include "nn/Tanh.h"
#include "nn/View.h"
#include "tests/GradCheck.h"

using nn::Tensor;

namespace {

std::shared_ptr<nn::Linear> linearWith(const std::vector<float>& weight, const std::vector<float>& bias) {
  auto linear = std::make_shared<nn::Linear>(2, static_cast<int64_t>(bias.size()));
  linear->weight.copy_(Tensor::fromVector({static_cast<int64_t>(bias.size()), 2}, weight));
  linear->bias.copy_(Tensor::fromVector({static_cast<int64_t>(bias.size())}, bias));
  return linear;
}

// Concat(1) of Linear(4 -> 3), Sequential(Linear(4 -> 2), Tanh) and Identity: output [N, 9].
std::shared_ptr<nn::Concat> branchyNet() {
  nn::manualSeed(4);
  auto concat = std::make_shared<nn::Concat>(1);
  concat->add(std::make_shared<nn::Linear>(4, 3));
  auto branch = std::make_shared<nn::Sequential>();
  branch->add(std::make_shared<nn::Linear>(4, 2));
  branch->add(std::make_shared<nn::Tanh>());
  concat->add(branch);
  concat->add(std::make_shared<nn::Identity>());
  return concat;
}

}  // namespace

TEST_CASE("Concat joins outputs and sums gradInputs as computed by hand", "[Concat]") {
  nn::Concat concat(1);
  auto linear = linearWith({1, 2, 3, 4, 5, 6}, {0.5f, -1, 2});
  concat.add(linear).add(std::make_shared<nn::Identity>());
  const Tensor x = Tensor::fromVector({2, 2}, {1, -1, 0, 2});
  // Linear: row 1 [1-2+0.5, 3-4-1, 5-6+2], row 2 [0+4+0.5, 0+8-1, 0+12+2]; then the input itself.
  REQUIRE(nn::test::maxAbsDiff(concat.forward(x), {-0.5f, -2, 1, 1, -1, 4.5f, 7, 14, 0, 2}) == 0);
  REQUIRE(concat.output.sizes() == std::vector<int64_t>{2, 5});

  const Tensor g = Tensor::fromVector({2, 5}, {1, 0, -1, 2, 3, 0, 1, 0, -1, 1});
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

TEST_CASE("Concat joins along any dimension", "[Concat]") {
  SECTION("dimension 0 stacks the outputs") {
    nn::Concat concat(0);
    concat.add(linearWith({1, 0, 0, 1, 1, 1}, {0, 0, 0})).add(linearWith({1, -1}, {10}));
    // [1, 2] -> first [1, 2, 3], second [9]: joined [4].
    REQUIRE(nn::test::maxAbsDiff(concat.forward(Tensor::fromVector({2}, {1, 2})), {1, 2, 3, 9}) == 0);
    const Tensor x = Tensor::fromVector({2, 2}, {1, 2, 3, 4});
    // Batch rows [1, 2] and [3, 4]: first gives [[1, 2, 3], [3, 4, 7]], second can not join it.
    REQUIRE_THROWS_WITH(concat.forward(x), Catch::Contains("nn.Concat") && Catch::Contains("(2)") &&
                                               Catch::Contains("[*, 3]") && Catch::Contains("[2, 1]"));
  }
  SECTION("a middle dimension of a 4-D output") {
    nn::Concat concat(1);
    concat.add(std::make_shared<nn::Identity>()).add(std::make_shared<nn::Tanh>());
    const Tensor x = nn::test::randomTensor({2, 3, 2, 2}, 1);
    const Tensor& y = concat.forward(x);
    REQUIRE(y.sizes() == std::vector<int64_t>{2, 6, 2, 2});
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t w = 0; w < 2; ++w) {
            REQUIRE(y.at({n, c, h, w}) == x.at({n, c, h, w}));
            REQUIRE(y.at({n, c + 3, h, w}) == Approx(std::tanh(x.at({n, c, h, w}))));
          }
    REQUIRE_THAT(nn::test::checkInputGradient(concat, x), nn::test::AgreesWithin(1e-3));
  }
}

TEST_CASE("Concat gradients agree with finite differences", "[Concat]") {
  auto concat = branchyNet();
  const Tensor x = nn::test::randomTensor({3, 4}, 2);
  REQUIRE(concat->forward(x).sizes() == std::vector<int64_t>{3, 9});
  REQUIRE_THAT(nn::test::checkInputGradient(*concat, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(*concat, x), nn::test::EachAgreesWithin(1e-3, 4));
}

TEST_CASE("Concat errors name the child or the shapes", "[Concat]") {
  const Tensor x = Tensor::zeros({2, 4});
  SECTION("an error inside a child carries its position") {
    nn::Concat concat(1);
    concat.add(std::make_shared<nn::Identity>()).add(std::make_shared<nn::Linear>(5, 2));
    REQUIRE_THROWS_WITH(concat.forward(x), Catch::StartsWith("(2) nn.Linear(5 -> 2)") && Catch::Contains("[2, 4]"));
  }
  SECTION("outputs that differ outside the joined dimension") {
    nn::Concat concat(1);
    concat.add(std::make_shared<nn::Linear>(4, 3)).add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 2}));
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
    auto concat = branchyNet();
    concat->forward(x);
    REQUIRE_THROWS_WITH(concat->backward(x, Tensor::zeros({2, 8})),
                        Catch::Contains("nn.Concat") && Catch::Contains("[2, 9]") && Catch::Contains("[2, 8]"));
  }
  SECTION("no children") {
    REQUIRE_THROWS_WITH(nn::Concat(0).forward(x), Catch::Contains("nn.Concat") && Catch::Contains("empty"));
    REQUIRE_THROWS_AS(nn::Concat(-1), nn::Error);
  }
}

TEST_CASE("Concat of a strided input equals that of its contiguous copy, without allocating later", "[Concat]") {
  auto a = branchyNet();
  auto b = branchyNet();
  const Tensor strided = nn::test::randomTensor({4, 3}, 3).transpose(0, 1);
  const Tensor g = nn::test::randomTensor({3, 9}, 4);
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

TEST_CASE("Concat clones are deep, keep the dimension and compute the same", "[Concat]") {
  auto concat = branchyNet();
  const Tensor x = nn::test::randomTensor({2, 4}, 5);
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
