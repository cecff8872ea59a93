// Test support for element-wise activations.
#include "tests/support/ActivationChecks.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <utility>
#include <vector>

#include "nn/io/Serialize.h"
#include "nn/modules/Linear.h"
#include "nn/modules/Sequential.h"
#include "nn/tensor/Random.h"
#include "tests/support/TempDir.h"

namespace nn::test {

Tensor awayFromZero(uint64_t seed, float low, float high) { return awayFromKinks(seed, low, high, {0.f}); }

Tensor awayFromKinks(uint64_t seed, float low, float high, std::initializer_list<float> kinks) {
  Tensor x = randomTensor({3, 11}, seed, low, high);
  for (int64_t i = 0; i < x.numel(); ++i) {
    float& v = x.data()[i];
    for (float k : kinks)
      if (v > k - 0.05f && v < k + 0.05f) v = v < k ? v - 0.05f : v + 0.05f;
  }
  return x;
}

std::pair<std::vector<float>, std::vector<float>> runPasses(const DeviceKind& kind, Module& module,
                                                            const std::vector<float>& x, const std::vector<float>& g,
                                                            bool inplace) {
  const int64_t n = static_cast<int64_t>(x.size());
  Tensor input = kind.on(Tensor::fromVector({n}, x));
  Tensor gradOutput = kind.on(Tensor::fromVector({n}, g));
  std::vector<float> y = module.forward(input).toVector();
  std::vector<float> gi = module.backward(input, gradOutput).toVector();
  // In place, the input and gradOutput hold the results; out of place, they are as they were.
  CHECK(input.toVector() == (inplace ? y : x));
  CHECK(gradOutput.toVector() == (inplace ? gi : g));
  return {std::move(y), std::move(gi)};
}

void checkWithinUlps(const std::vector<float>& got, const std::vector<float>& want, int ulps) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i, got[i], want[i]);
    CHECK(std::fabs(double(got[i]) - want[i]) <= ulps * std::ldexp(1.0, std::ilogb(want[i] == 0 ? 1.f : want[i]) - 23));
  }
}

GradientCheck checkInPlaceInNetwork(const DeviceKind& kind, const ModulePtr& activation, const Tensor& input) {
  manualSeed(3);
  auto first = std::make_shared<Linear>(11, 11);
  std::vector<float> identity(121, 0.f);
  for (size_t i = 0; i < 11; ++i) identity[i * 12] = 1.f;
  first->weight.copy_(Tensor::fromVector({11, 11}, identity));
  first->bias.zero_();
  auto net = std::make_shared<Sequential>();
  net->add(first).add(activation).add(std::make_shared<Linear>(11, 4));
  net->to(kind.device());
  return checkInputGradient(*net, kind.on(input));
}

ModulePtr savedAndLoaded(Module& module) {
  TempDir dir;
  const std::string path = dir.file("module.safetensors");
  save(module, path);
  return load(path);
}

void checkExactPasses(const DeviceKind& kind, Module& module, const std::vector<int64_t>& sizes,
                      const std::vector<float>& output, const std::vector<float>& gradInput, int ulps) {
  CAPTURE(module.toString());
  const Tensor x = kind.on(exactValues(sizes, 5, 17, 8, 8));
  const Tensor& y = module.forward(x);
  checkWithinUlps(y.toVector(), output, ulps);
  const Tensor g = kind.on(exactValues(y.sizes(), 7, 13, 6, 4));
  checkWithinUlps(module.backward(x, g).toVector(), gradInput, ulps);
}

void checkCopies(const DeviceKind& kind, Module& module, const Tensor& x) {
  module.to(kind.device());
  const std::vector<float> y = module.forward(x).toVector();
  for (const ModulePtr& copy : {savedAndLoaded(module), module.clone()}) {
    CHECK(copy->typeName() == module.typeName());
    CHECK(copy->toString() == module.toString());
    copy->to(kind.device());
    CHECK(copy->forward(x).toVector() == y);
  }
}

}  // namespace nn::test
