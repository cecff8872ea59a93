// nn::models: torchvision's ResNets and MobileNetV2 under torchvision's names. Against
// torchvision itself (tests/reference/ModelsReference.h, from tests/reference/make_models_reference.py): the state
// dict's names and shapes, the logits in evaluation mode and the gradients of a step (resnet18's in
// training mode, resnet50's and mobilenetV2's with batch normalisation frozen, as fine-tuning runs
// it), with parameters of the same closed formulas on both sides; then a file of torchvision's names loaded strictly,
// printed names, and names kept through clone, save and load.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "nn/core/Container.h"
#include "nn/io/Serialize.h"
#include "nn/models/MobileNet.h"
#include "nn/models/ResNet.h"
#include "nn/modules/Linear.h"
#include "nn/modules/ReLU.h"
#include "nn/modules/Sequential.h"
#include "tests/reference/ModelsReference.h"
#include "tests/support/TempDir.h"

using nn::Tensor;

namespace {

// u(i, s) of tests/reference/make_models_reference.py, in double as Python computes it.
double u(int64_t i, int64_t salt) {
  return static_cast<double>((static_cast<uint64_t>(i) * 2654435761u + static_cast<uint64_t>(salt) * 40503u) % 65536) /
             32768.0 -
         1.0;
}

Tensor formula(const std::vector<int64_t>& sizes, int64_t salt) {
  Tensor t = Tensor::empty(sizes);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(u(i, salt));
  return t;
}

// The parameters and buffers of the script's formulas, by name.
void fillByFormula(nn::Module& model) {
  for (nn::NamedTensor& t : model.stateDict()) {
    int64_t salt = 0;
    for (char c : t.name) salt += static_cast<unsigned char>(c);
    const std::string last = t.name.substr(t.name.rfind('.') + 1);
    std::vector<float> values(static_cast<size_t>(t.value.numel()));
    const double fanIn = t.value.dim() > 1 ? static_cast<double>(t.value.numel() / t.value.size(0)) : 1;
    for (size_t i = 0; i < values.size(); ++i) {
      const double v = u(static_cast<int64_t>(i), salt);
      values[i] = static_cast<float>(t.value.dim() > 1          ? v * std::sqrt(3.0 / fanIn)
                                     : last == "weight"      ? 1 + v / 5
                                     : last == "running_var" ? 1 + (v + 1) / 4
                                                             : v / 10);
    }
    t.value.copy_(Tensor::fromVector(t.value.sizes(), values));
  }
}

double maxRelativeDifference(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  double scale = 0, worst = 0;
  for (float w : want) scale = std::max(scale, std::fabs(static_cast<double>(w)));
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]) / scale);
  return worst;
}

struct Reference {
  const std::vector<std::string>& names;
  const std::vector<std::vector<int64_t>>& shapes;
  const std::vector<float>& logits;
  const std::vector<std::string>& gradientNames;
  const std::vector<float>& gradientSquares;
  const std::vector<float>& gradientSamples;
};

void checkAgainstTorchvision(const nn::ModulePtr& model, const Reference& ref, bool trainingStep) {
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> shapes;
  for (const nn::NamedTensor& t : model->stateDict()) {
    names.push_back(t.name);
    shapes.push_back(t.value.sizes());
  }
  CHECK(names == ref.names);
  CHECK(shapes == ref.shapes);

  fillByFormula(*model);
  const Tensor x = formula({2, 3, 64, 64}, 7);
  model->evaluate();
  CHECK(maxRelativeDifference(model->forward(x).toVector(), ref.logits) < 1e-4);

  if (trainingStep) model->training();
  model->zeroGradParameters();
  const Tensor& y = model->forward(x);
  model->backward(x, formula({2, 10}, 11));
  const std::vector<nn::NamedParameter> parameters = model->namedParameters();
  for (size_t k = 0; k < ref.gradientNames.size(); ++k) {
    INFO(ref.gradientNames[k]);
    const nn::NamedParameter* p = nullptr;
    for (const nn::NamedParameter& q : parameters)
      if (q.name == ref.gradientNames[k]) p = &q;
    REQUIRE(p != nullptr);
    const std::vector<float> g = p->gradient.toVector();
    double squares = 0;
    for (float v : g) squares += static_cast<double>(v) * v;
    CHECK(squares == Approx(ref.gradientSquares[k]).epsilon(2e-4));
    const size_t step = std::max<size_t>(1, g.size() / 16);
    std::vector<float> samples;
    for (size_t s = 0; s < 16; ++s) samples.push_back(g.size() >= 16 ? g[s * step] : 0.f);
    const std::vector<float> want(ref.gradientSamples.begin() + static_cast<std::ptrdiff_t>(16 * k),
                                  ref.gradientSamples.begin() + static_cast<std::ptrdiff_t>(16 * (k + 1)));
    CHECK(maxRelativeDifference(samples, want) < 1e-3);
  }
  CHECK(y.size(1) == 10);
}

}  // namespace

TEST_CASE("resnet18 is torchvision's: names, shapes, logits and a training step's gradients", "[models]") {
  checkAgainstTorchvision(nn::models::resnet18(10),
                          {nn::test::kResNet18Names, nn::test::kResNet18Shapes, nn::test::kResNet18Logits,
                           nn::test::kResNet18GradientNames, nn::test::kResNet18GradientSquares,
                           nn::test::kResNet18GradientSamples},
                          true);
}

TEST_CASE("resnet50 is torchvision's: names, shapes, logits and the gradients with frozen batch statistics",
          "[models]") {
  checkAgainstTorchvision(nn::models::resnet50(10),
                          {nn::test::kResNet50Names, nn::test::kResNet50Shapes, nn::test::kResNet50Logits,
                           nn::test::kResNet50GradientNames, nn::test::kResNet50GradientSquares,
                           nn::test::kResNet50GradientSamples},
                          false);
}

TEST_CASE("mobilenetV2 is torchvision's: names, shapes, logits and the gradients with frozen batch statistics",
          "[models]") {
  checkAgainstTorchvision(nn::models::mobilenetV2(10),
                          {nn::test::kMobileNetV2Names, nn::test::kMobileNetV2Shapes, nn::test::kMobileNetV2Logits,
                           nn::test::kMobileNetV2GradientNames, nn::test::kMobileNetV2GradientSquares,
                           nn::test::kMobileNetV2GradientSamples},
                          false);
}

TEST_CASE("a file of torchvision's names loads strictly into resnet18, and names survive clone, save and load",
          "[models]") {
  nn::test::TempDir dir;
  nn::ModulePtr source = nn::models::resnet18(10);
  fillByFormula(*source);
  // A file as PyTorch writes it: torchvision's names, and each batch normalisation's count.
  std::vector<nn::NamedTensor> tensors = source->stateDict();
  for (const std::string& name : nn::test::kResNet18Names)
    if (name.size() > 12 && name.compare(name.size() - 12, 12, "running_mean") == 0)
      tensors.push_back({name.substr(0, name.size() - 12) + "num_batches_tracked", Tensor::fromVector({}, {7.f})});
  const std::string path = dir.file("resnet18.safetensors");
  nn::writeSafetensors(path, tensors, {});
  nn::ModulePtr model = nn::models::resnet18(10);
  const nn::LoadReport report = nn::loadStateInto(*model, path);
  CHECK(report.complete());
  CHECK(report.loaded.size() == nn::test::kResNet18Names.size());
  CHECK(report.ignored.size() == 20);  // one count per batch normalisation
  const Tensor x = formula({1, 3, 32, 32}, 3);
  source->evaluate();
  model->evaluate();
  CHECK(model->forward(x).toVector() == source->forward(x).toVector());

  // Another class count: all but fc, strictly, with a filter.
  nn::ModulePtr hundred = nn::models::resnet18(100);
  nn::LoadOptions options;
  options.filter = [](const std::string& name) { return name.rfind("fc.", 0) != 0; };
  CHECK(nn::loadStateInto(*hundred, path, options).loaded.size() == nn::test::kResNet18Names.size() - 2);

  // The names are the module's: its print, a clone, a saved and loaded copy.
  const std::string printed = model->toString();
  CHECK(printed.find("(conv1): nn.SpatialConvolution(3 -> 64, 7x7, 2,2, 3,3, no bias)") != std::string::npos);
  CHECK(printed.find("(downsample): nn.Sequential") != std::string::npos);
  CHECK(printed.find("(fc): nn.Linear(512 -> 10)") != std::string::npos);
  nn::ModulePtr copy = model->clone();
  CHECK(copy->stateDict().front().name == "conv1.weight");
  nn::save(*model, dir.file("saved.safetensors"));
  nn::ModulePtr loaded = nn::load(dir.file("saved.safetensors"));
  std::vector<std::string> names;
  for (const nn::NamedTensor& t : loaded->stateDict()) names.push_back(t.name);
  CHECK(names == nn::test::kResNet18Names);
  loaded->evaluate();
  CHECK(loaded->forward(x).toVector() == source->forward(x).toVector());
}

TEST_CASE("children's names: unique, without '.', not another child's index; get by name", "[models]") {
  nn::Sequential seq;
  seq.add("first", std::make_shared<nn::Linear>(3, 4));
  seq.add(std::make_shared<nn::ReLU>());
  CHECK(seq.childName(0) == "first");
  CHECK(seq.childName(1) == "1");
  CHECK(seq.stateDict().front().name == "first.weight");
  CHECK(seq.get("first") == seq.get(0));
  CHECK_THROWS_WITH(seq.get("second"), Catch::Contains("no child is named 'second'"));
  CHECK_THROWS_WITH(seq.add("first", std::make_shared<nn::ReLU>()), Catch::Contains("two children are named 'first'"));
  CHECK_THROWS_WITH(seq.add("1", std::make_shared<nn::ReLU>()), Catch::Contains("two children are named '1'"));
  CHECK_THROWS_WITH(seq.add("a.b", std::make_shared<nn::ReLU>()), Catch::Contains("has a '.'"));
  CHECK(seq.size() == 2);  // the refused ones were not added
  seq.insert(std::make_shared<nn::ReLU>(), 0);
  CHECK(seq.childName(1) == "first");
  CHECK(seq.stateDict().front().name == "first.weight");
  seq.remove(1);
  CHECK(seq.stateDict().empty());
}
