// Test support for element-wise activations.
#include "tests/ActivationChecks.h"

#include <vector>

#include "nn/Linear.h"
#include "nn/Random.h"
#include "nn/Sequential.h"
#include "nn/Serialize.h"
#include "tests/TempDir.h"

namespace nn::test {

Tensor awayFromZero(uint64_t seed, float low, float high) {
  Tensor x = randomTensor({3, 11}, seed, low, high);
  for (int64_t i = 0; i < x.numel(); ++i) {
    float& v = x.data()[i];
    if (v > -0.05f && v < 0.05f) v = v < 0 ? v - 0.05f : v + 0.05f;
  }
  return x;
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

}  // namespace nn::test
