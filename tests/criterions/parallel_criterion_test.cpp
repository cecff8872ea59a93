// nn::ParallelCriterion (Torch7's): the weighted sum of its criterions, each on its item of
// the input table and of the target table (or on the one target with repeatTarget), nested;
// values by hand, finite differences, printing and errors; on CPU devices and, where found,
// CUDA devices.
#include "nn/criterions/ParallelCriterion.h"

#include <catch2/catch.hpp>
#include <memory>

#include "nn/criterions/AbsCriterion.h"
#include "nn/criterions/ClassNLLCriterion.h"
#include "nn/criterions/MSECriterion.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Activity;
using nn::Table;
using nn::Tensor;
using nn::test::EachAgreesWithin;

namespace {

Tensor on(const nn::test::DeviceKind& kind, const std::vector<int64_t>& sizes, const std::vector<float>& values) {
  return kind.on(Tensor::fromVector(sizes, values));
}

}  // namespace

NN_DEVICE_TEST_CASE("ParallelCriterion sums its weighted criterions, as computed by hand", "[ParallelCriterion]") {
  nn::ParallelCriterion criterion;
  criterion.add(std::make_shared<nn::MSECriterion>(), 0.5f).add(std::make_shared<nn::AbsCriterion>(), 2.f);
  REQUIRE(criterion.size() == 2);
  const Table input{on(kind, {2}, {1, 2}), on(kind, {2}, {3, -1})};
  const Table target{on(kind, {2}, {0, 0}), on(kind, {2}, {1, 1})};
  // MSE: (1 + 4) / 2 = 2.5, weighted 1.25; Abs: (2 + 2) / 2 = 2, weighted 4.
  REQUIRE(criterion.forward(input, target) == 5.25f);
  const Activity& gradInput = criterion.backward(input, target);
  REQUIRE(gradInput.size() == 2);
  // MSE: 2 (x - t) / 2 = [1, 2], weighted [0.5, 1]; Abs: sign(x - t) / 2, weighted [1, -1].
  REQUIRE(gradInput[0].tensor().toVector() == std::vector<float>{0.5f, 1});
  REQUIRE(gradInput[1].tensor().toVector() == std::vector<float>{1, -1});
  REQUIRE(gradInput[0].tensor().device() == kind.device());
}

NN_DEVICE_TEST_CASE("ParallelCriterion with repeatTarget gives every criterion the one target",
                    "[ParallelCriterion]") {
  nn::ParallelCriterion criterion(true);
  criterion.add(std::make_shared<nn::MSECriterion>()).add(std::make_shared<nn::AbsCriterion>());
  const Table input{on(kind, {2}, {1, 2}), on(kind, {2}, {3, -1})};
  // MSE against [0, 0]: 2.5; Abs: (3 + 1) / 2 = 2.
  REQUIRE(criterion.forward(input, on(kind, {2}, {0, 0})) == 4.5f);
  REQUIRE(criterion.backward(input, on(kind, {2}, {0, 0}))[1].tensor().toVector() == std::vector<float>{0.5f, -0.5f});
}

NN_DEVICE_TEST_CASE("nested ParallelCriterions take nested tables; gradients agree with finite differences",
                    "[ParallelCriterion]") {
  auto inner = std::make_shared<nn::ParallelCriterion>();
  inner->add(std::make_shared<nn::MSECriterion>(), 3.f).add(std::make_shared<nn::ClassNLLCriterion>());
  nn::ParallelCriterion outer;
  outer.add(std::make_shared<nn::MSECriterion>(false), 0.25f).add(inner, -1.f);
  const Tensor a = kind.on(nn::test::randomTensor({3, 2}, 1)), b = kind.on(nn::test::randomTensor({4}, 2));
  const Tensor logp = kind.on(nn::test::randomTensor({3, 5}, 3, -3.f, -0.1f));
  const Table input{a, Table{b, logp}};
  const Table target{kind.on(nn::test::randomTensor({3, 2}, 4)),
                     Table{kind.on(nn::test::randomTensor({4}, 5)), on(kind, {3}, {4, 0, 2})}};
  // By hand from the parts: 0.25 sum (a - ta)^2 - (3 mean (b - tb)^2 + NLL).
  nn::MSECriterion sum(false), mean;
  nn::ClassNLLCriterion nll;
  const double expected = 0.25 * sum.forward(a, target[0].tensor()) -
                          (3.0 * mean.forward(b, target[1][0].tensor()) + nll.forward(logp, target[1][1].tensor()));
  REQUIRE(outer.forward(input, target) == Approx(expected).epsilon(1e-6));
  REQUIRE_THAT(nn::test::checkCriterionGradients(outer, input, target), EachAgreesWithin(1e-3, 3));
}

NN_DEVICE_TEST_CASE("ParallelCriterion prints its criterions and weights, and names what it cannot take",
                    "[ParallelCriterion]") {
  nn::ParallelCriterion criterion;
  REQUIRE_THROWS_WITH(criterion.forward(Table{on(kind, {1}, {1})}, Table{on(kind, {1}, {1})}),
                      Catch::Contains("nn.ParallelCriterion") && Catch::Contains("add()"));
  criterion.add(std::make_shared<nn::MSECriterion>(), 0.5f).add(std::make_shared<nn::AbsCriterion>());
  const std::string text = criterion.toString();
  REQUIRE(text.find("nn.ParallelCriterion") == 0);
  REQUIRE(text.find("(1): nn.MSECriterion") != std::string::npos);
  REQUIRE(text.find("weight 0.5") != std::string::npos);
  REQUIRE(text.find("(2): nn.AbsCriterion") != std::string::npos);
  const Tensor x = on(kind, {2}, {1, 2});
  REQUIRE_THROWS_WITH(criterion.forward(x, x), Catch::Contains("nn.ParallelCriterion") &&
                                                   Catch::Contains("a table of 2") && Catch::Contains("[2]"));
  REQUIRE_THROWS_WITH(criterion.forward(Table{x}, Table{x}), Catch::Contains("{[2]}"));
  REQUIRE_THROWS_WITH(criterion.forward(Table{x, x}, x),
                      Catch::Contains("target") && Catch::Contains("repeatTarget"));
  REQUIRE_THROWS_WITH(criterion.add(nullptr), Catch::Contains("nullptr"));
  // An error of a member criterion reaches the caller.
  REQUIRE_THROWS_WITH(criterion.forward(Table{x, x}, Table{x, on(kind, {3}, {1, 2, 3})}),
                      Catch::Contains("nn.AbsCriterion"));
}
