// nn::SpatialDropout: whole planes dropped and the rest scaled, the fraction of planes, the
// evaluation mode, the gradient with a fixed mask (finite differences), another device drawing
// the host's masks, save/load, clone and errors. On every device type.
#include "nn/modules/SpatialDropout.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "nn/tensor/Random.h"
#include "tests/support/ActivationChecks.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

// A SpatialDropout whose generator is reseeded before every forward: one fixed mask.
class FixedMaskSpatialDropout : public nn::Module {
 public:
  explicit FixedMaskSpatialDropout(float p) : dropout(p) {}
  const Tensor& updateOutput(const Tensor& input) override {
    dropout.generator().seed(23);
    output.set_(dropout.updateOutput(input));
    return output;
  }
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override {
    gradInput.set_(dropout.updateGradInput(input, gradOutput));
    return gradInput;
  }
  std::string typeName() const override { return "FixedMaskSpatialDropout"; }

  nn::SpatialDropout dropout;
};

// The factor of each plane of a [.., H, W] tensor's mask, checking that the plane holds one
// value throughout.
std::vector<float> planeFactors(const Tensor& noise) {
  const std::vector<float> v = noise.toVector();
  const size_t plane = static_cast<size_t>(noise.size(noise.dim() - 2) * noise.size(noise.dim() - 1));
  std::vector<float> factors;
  for (size_t p = 0; p < v.size() / plane; ++p) {
    for (size_t i = 1; i < plane; ++i) REQUIRE(v[p * plane + i] == v[p * plane]);
    factors.push_back(v[p * plane]);
  }
  return factors;
}

}  // namespace

NN_DEVICE_TEST_CASE("SpatialDropout zeroes whole planes with probability p and scales the rest by 1 / (1 - p)",
                    "[SpatialDropout]") {
  nn::manualSeed(3);
  nn::SpatialDropout dropout(0.25f);
  REQUIRE(dropout.toString() == "nn.SpatialDropout(0.25)");
  const Tensor x = kind.on(nn::test::randomTensor({40, 50, 3, 2}, 4));
  const std::vector<float> in = x.toVector(), out = dropout.forward(x).toVector();
  const std::vector<float> factors = planeFactors(dropout.noise);
  REQUIRE(factors.size() == 2000);
  int64_t dropped = 0;
  for (float f : factors) {
    REQUIRE((f == 0.f || f == 4.f / 3));
    dropped += f == 0.f;
  }
  // 2000 planes: the count dropped is 500 +- 19 (one standard deviation).
  REQUIRE(dropped > 420);
  REQUIRE(dropped < 580);
  const std::vector<float> noise = dropout.noise.toVector();
  for (size_t i = 0; i < in.size(); ++i) REQUIRE(out[i] == in[i] * noise[i]);
  // gradInput = gradOutput * noise.
  const Tensor g = kind.on(nn::test::randomTensor({40, 50, 3, 2}, 5));
  const std::vector<float> gi = dropout.backward(x, g).toVector(), gv = g.toVector();
  for (size_t i = 0; i < gi.size(); ++i) REQUIRE(gi[i] == gv[i] * noise[i]);
  // [C, H, W] input: a factor per plane too.
  dropout.forward(kind.on(nn::test::randomTensor({30, 4, 4}, 6)));
  REQUIRE(planeFactors(dropout.noise).size() == 30);
}

NN_DEVICE_TEST_CASE("SpatialDropout passes input and gradient through in evaluation and with p = 0",
                    "[SpatialDropout]") {
  const Tensor x = kind.on(nn::test::randomTensor({2, 3, 4, 5}, 7));
  const Tensor g = kind.on(nn::test::randomTensor({2, 3, 4, 5}, 8));
  nn::SpatialDropout evaluated(0.5f), none(0.f);
  evaluated.evaluate();
  for (nn::SpatialDropout* d : {&evaluated, &none}) {
    REQUIRE(d->forward(x).toVector() == x.toVector());
    REQUIRE(d->backward(x, g).toVector() == g.toVector());
  }
}

NN_DEVICE_TEST_CASE("SpatialDropout's gradient agrees with finite differences for a fixed mask", "[SpatialDropout]") {
  FixedMaskSpatialDropout fixed(0.4f);
  const Tensor x = kind.on(nn::test::randomTensor({3, 4, 2, 3}, 9));
  fixed.forward(x);
  const std::vector<float> factors = planeFactors(fixed.dropout.noise);
  REQUIRE(std::count(factors.begin(), factors.end(), 0.f) > 0);
  REQUIRE(std::count(factors.begin(), factors.end(), 0.f) < 12);
  REQUIRE_THAT(nn::test::checkInputGradient(fixed, x), nn::test::AgreesWithin(1e-3));
}

NN_DEVICE_TEST_CASE("SpatialDropout on another device draws the host's masks from the same seed", "[SpatialDropout]") {
  const nn::Device device = kind.compared();
  const Tensor x = nn::test::randomTensor({5, 6, 3, 3}, 10);
  nn::SpatialDropout reference(0.3f), tested(0.3f);
  reference.generator().seed(7);
  tested.generator().seed(7);
  tested.to(device);
  for (int step = 0; step < 2; ++step) {
    const std::vector<float> y = reference.forward(x).toVector();
    REQUIRE(tested.forward(nn::test::stridedOn(x, device)).toVector() == y);
    REQUIRE(tested.noise.toVector() == reference.noise.toVector());
  }
}

NN_DEVICE_TEST_CASE("SpatialDropout saves, loads and clones with p and its type", "[SpatialDropout]") {
  nn::SpatialDropout dropout(0.3f);
  for (const nn::ModulePtr& copy : {nn::test::savedAndLoaded(dropout), dropout.clone()}) {
    REQUIRE(copy->typeName() == "nn.SpatialDropout");
    REQUIRE(copy->toString() == "nn.SpatialDropout(0.3)");
    copy->to(kind.device());
    copy->forward(kind.on(nn::test::randomTensor({4, 5, 2, 2}, 11)));
    REQUIRE(planeFactors(std::dynamic_pointer_cast<nn::SpatialDropout>(copy)->noise).size() == 20);
  }
}

NN_DEVICE_TEST_CASE("SpatialDropout rejects input without planes and a bad p, naming itself", "[SpatialDropout]") {
  REQUIRE_THROWS_WITH(nn::SpatialDropout(1.f), Catch::Contains("nn.SpatialDropout") && Catch::Contains("[0, 1)"));
  nn::SpatialDropout dropout(0.5f);
  REQUIRE_THROWS_WITH(dropout.forward(Tensor::zeros({4, 5}, kind.device())),
                      Catch::Contains("nn.SpatialDropout(0.5)") && Catch::Contains("[4, 5]"));
  const Tensor x = Tensor::zeros({2, 3, 4}, kind.device());
  dropout.forward(x);
  REQUIRE_THROWS_WITH(dropout.backward(x, Tensor::zeros({2, 3, 5}, kind.device())),
                      Catch::Contains("nn.SpatialDropout(0.5)") && Catch::Contains("[2, 3, 5]"));
}
