// The custom-module example (examples/custom_module.cpp, examples/CustomModules.h): its modules
// meet the module contract (reference values, finite differences, errors, clone), and the
// example trains them on cpu:0,cpu:1 and saves a checkpoint that nn::load rebuilds into them.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "examples/CustomModules.h"
#include "nn/nn.h"
#include "tests/support/ExampleRun.h"
#include "tests/support/GradCheck.h"
#include "tests/support/TempDir.h"

using Catch::Contains;
using nn::Tensor;

TEST_CASE("my.Affine scales and shifts each feature, with gradients by hand and by finite differences",
          "[custom module]") {
  my::Affine affine(3);
  affine.weight.copy_(Tensor::fromVector({3}, {2.f, -1.f, 0.5f}));
  affine.bias.copy_(Tensor::fromVector({3}, {0.f, 1.f, -2.f}));
  const Tensor x = Tensor::fromVector({2, 3}, {1.f, 2.f, 3.f, -1.f, 0.f, 4.f});
  CHECK(affine.forward(x).toVector() == std::vector<float>{2.f, -1.f, -0.5f, -2.f, 1.f, 0.f});
  const Tensor g = Tensor::fromVector({2, 3}, {1.f, 1.f, 2.f, 3.f, -1.f, 1.f});
  affine.zeroGradParameters();
  CHECK(affine.backward(x, g).toVector() == std::vector<float>{2.f, -1.f, 1.f, 6.f, 1.f, 0.5f});
  CHECK(affine.gradWeight.toVector() == std::vector<float>{1.f - 3.f, 2.f, 6.f + 4.f});
  CHECK(affine.gradBias.toVector() == std::vector<float>{4.f, 0.f, 3.f});
  const Tensor input = nn::test::randomTensor({4, 3}, 1);
  REQUIRE_THAT(nn::test::checkInputGradient(affine, input), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(affine, input), nn::test::EachAgreesWithin(1e-3, 2));
  CHECK_THROWS_WITH(affine.forward(Tensor::zeros({4, 5})),
                    Contains("my.Affine") && Contains("expected input of size [batch, 3], got [4, 5]"));
}

TEST_CASE("my.Residual adds its child's output to its input, and its gradients agree with finite differences",
          "[custom module]") {
  nn::manualSeed(2);
  auto inner = std::make_shared<nn::Linear>(3, 3);
  my::Residual residual(inner);
  const Tensor x = nn::test::randomTensor({2, 3}, 3);
  const Tensor expected = x.clone().add_(inner->forward(x));
  CHECK(nn::test::maxAbsDiff(residual.forward(x), expected) == 0);
  REQUIRE_THAT(nn::test::checkInputGradient(residual, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(residual, x), nn::test::EachAgreesWithin(1e-3, 2));
  CHECK_THROWS_WITH(my::Residual::create(nn::Config(), {}), Contains("my.Residual: expected one child module, got 0"));
}

TEST_CASE("the custom modules clone through their registrations", "[custom module]") {
  nn::manualSeed(4);
  const nn::ModulePtr net = my::mlp();
  const nn::ModulePtr copy = net->clone();
  CHECK(copy->toString() == net->toString());
  CHECK_THAT(copy->toString(), Contains("my.Affine(features=128)") && Contains("my.Residual"));
  const Tensor x = nn::test::randomTensor({5, 1, 28, 28}, 5);
  CHECK(nn::test::maxAbsDiff(copy->forward(x), net->forward(x).clone()) == 0);
}

TEST_CASE("the custom-module example trains on two devices and saves what nn::load rebuilds", "[custom module]") {
  nn::test::TempDir dir;
  nn::test::writeSyntheticSplit(dir, "train", 512, 1);
  nn::test::writeSyntheticSplit(dir, "t10k", 200, 2);
  const std::string saved = dir.file("custom.safetensors");
  const nn::test::ExampleResult run = nn::test::runExample(
      "custom_module", {"--data-dir", dir.path(), "--batch-size", "32", "--epochs", "2", "--save", saved});
  CAPTURE(run.stdoutText, run.stderrText);
  REQUIRE(run.exitStatus == 0);
  CHECK_THAT(run.stdoutText, Contains("nn.DataParallelTable") && Contains("my.Affine"));
  const std::string key = "test accuracy ";
  const size_t at = run.stdoutText.rfind(key);
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(run.stdoutText.substr(at + key.size())) > 0.8);  // ten bands of noise: easy

  // nn::load rebuilds the table and the modules inside it from their registered names.
  const nn::ModulePtr loaded = nn::load(saved);
  CHECK(loaded->typeName() == "nn.DataParallelTable");
  CHECK_THAT(loaded->toString(), Contains("my.Affine(features=128)") && Contains("my.Residual"));
  // The same state in a network built afresh: the same outputs (to the rounding of the table's
  // products over half the batch on each device).
  nn::manualSeed(9);
  const nn::ModulePtr fresh = my::mlp();
  nn::loadStateInto(*fresh, saved);
  loaded->evaluate();
  fresh->evaluate();
  const Tensor x = nn::test::randomTensor({6, 1, 28, 28}, 6);
  CHECK(nn::test::maxAbsDiff(fresh->forward(x), loaded->forward(x).clone()) < 1e-5);
  const auto& affine = dynamic_cast<my::Affine&>(*std::dynamic_pointer_cast<nn::Sequential>(fresh)->get(2));
  CHECK(nn::test::maxAbsDiff(affine.weight, std::vector<float>(128, 1.f)) > 0);  // trained
}
