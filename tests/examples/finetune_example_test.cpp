// The fine-tuning example (examples/finetune.cpp) as a user runs it: weights under torchvision's
// names (with PyTorch's batch counts) loaded into resnet18 but its classifier, a Lua Torch model
// whose last Linear is replaced, each trained on an image folder on cpu:0,cpu:1, saved, and
// exported to ONNX, which ONNX Runtime runs to the saved model's numbers.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "nn/io/Serialize.h"
#include "nn/models/ResNet.h"
#include "nn/nn.h"
#include "tests/support/ExampleRun.h"
#include "tests/support/ImageFiles.h"
#include "tests/support/OnnxRuntime.h"
#include "tests/support/Skip.h"
#include "tests/support/TempDir.h"

using nn::Tensor;
using nn::test::runExample;

namespace {

// DIR/{train,test}/{red,green,blue}: pictures of `size` x `size` tinted by their class, with noise.
void writeFolder(const nn::test::TempDir& dir, int size, int channels) {
  const std::vector<std::string> classes{"red", "green", "blue"};
  uint32_t noise = 7;
  for (const std::string split : {"train", "test"})
    for (size_t c = 0; c < classes.size(); ++c) {
      const std::string folder = dir.file(split + "/" + classes[c]);
      std::filesystem::create_directories(folder);
      for (int k = 0; k < (split == "train" ? 8 : 4); ++k) {
        std::vector<uint8_t> samples(static_cast<size_t>(size * size * channels));
        for (size_t i = 0; i < samples.size(); ++i) {
          noise = noise * 1664525u + 1013904223u;
          const bool tinted = channels == 1 ? (i % 3 == c) : (i % 3 == c % 3);
          samples[i] = static_cast<uint8_t>((tinted ? 160 : 40) + (noise >> 27));
        }
        nn::test::writePng(folder + "/" + std::to_string(k) + ".png", size, size, channels, samples);
      }
    }
}

}  // namespace

TEST_CASE("finetune: torchvision's resnet18 weights, a new classifier, two devices, saved and exported",
          "[finetune][noemulator]") {
  nn::test::TempDir dir;
  writeFolder(dir, 32, 3);
  // torchvision's state_dict() of resnet18 for 1000 classes, with a batch count per normalisation.
  nn::ModulePtr pretrained = nn::models::resnet18(1000);
  std::vector<nn::NamedTensor> tensors = pretrained->stateDict();
  for (const nn::NamedTensor& t : pretrained->stateDict())
    if (t.name.size() > 12 && t.name.compare(t.name.size() - 12, 12, "running_mean") == 0)
      tensors.push_back({t.name.substr(0, t.name.size() - 12) + "num_batches_tracked", Tensor::fromVector({}, {1.f})});
  const std::string weights = dir.file("resnet18.safetensors");
  nn::writeSafetensors(weights, tensors, {});

  const std::string saved = dir.file("tuned.safetensors"), onnx = dir.file("tuned.onnx");
  const nn::test::ExampleResult run =
      runExample("finetune", {"--weights", weights, "--images", dir.path(), "--devices", "cpu:0,cpu:1", "--epochs",
                              "2", "--size", "32", "--batch-size", "8", "--save", saved, "--export-onnx", onnx});
  CAPTURE(run.stdoutText, run.stderrText);
  REQUIRE(run.exitStatus == 0);
  CHECK(run.stdoutText.find("3 classes, 24 training and 12 test pictures of 32x32") != std::string::npos);
  // 102 tensors (20 convolutions without a bias, 20 batch normalisations, fc), less fc's two.
  CHECK(run.stdoutText.find("loaded 100 tensors") != std::string::npos);
  CHECK(run.stdoutText.find("ignored fc.weight: left out by the filter") != std::string::npos);
  CHECK(run.stdoutText.find("ignored layer4.1.bn2.num_batches_tracked") != std::string::npos);
  CHECK(run.stdoutText.find("nn.DataParallelTable") != std::string::npos);
  CHECK(run.stdoutText.find("epoch 2  train loss") != std::string::npos);

  // The saved model: torchvision's names, a classifier of 3, the file's weights moved by training.
  nn::ModulePtr tuned = nn::load(saved);
  const std::vector<nn::NamedTensor> state = tuned->stateDict();
  REQUIRE(state.back().name == "fc.bias");
  CHECK(state.back().value.sizes() == std::vector<int64_t>{3});
  CHECK(state.front().name == "conv1.weight");
  CHECK(state.front().value.toVector() != pretrained->stateDict().front().value.toVector());

  const std::string python = nn::test::referencePython();
  if (python.empty()) NN_SKIP("ONNX Runtime is not installed (tools/reference-venv.sh); the export was written");
  nn::Generator g(3);
  const Tensor x = Tensor::randn({2, 3, 32, 32}, g);
  tuned->evaluate();
  const std::vector<float> ours = tuned->forward(x).toVector();
  nn::test::OnnxRuntimeRuns runs;
  const size_t index = runs.add(onnx, x);
  runs.run(python);
  const std::vector<float> theirs = runs.output(index, "output").toVector();
  REQUIRE(theirs.size() == ours.size());
  for (size_t i = 0; i < ours.size(); ++i) CHECK(theirs[i] == Approx(ours[i]).epsilon(1e-4).margin(1e-4));
}

TEST_CASE("finetune: a Lua Torch model's last Linear replaced, trained on grey pictures", "[finetune][noemulator]") {
  nn::test::TempDir dir;
  writeFolder(dir, 8, 1);
  const std::string saved = dir.file("tuned.safetensors");
  const nn::test::ExampleResult run =
      runExample("finetune", {"--weights", "tests/fixtures/torch7/convnet.t7", "--images", dir.path(), "--channels", "1",
                              "--size", "8", "--devices", "cpu:0,cpu:1", "--epochs", "1", "--batch-size", "8",
                              "--save", saved});
  CAPTURE(run.stdoutText, run.stderrText);
  REQUIRE(run.exitStatus == 0);
  CHECK(run.stdoutText.find("replaced (10) nn.Linear(24 -> 5) by nn.Linear(24 -> 3)") != std::string::npos);
  CHECK(run.stdoutText.find("epoch 1  train loss") != std::string::npos);
  nn::ModulePtr tuned = nn::load(saved);
  CHECK(tuned->toString().find("nn.LogSoftMax") != std::string::npos);

  const nn::test::ExampleResult bad =
      runExample("finetune", {"--weights", "w.safetensors", "--images", dir.path(), "--channels", "1"});
  CHECK(bad.exitStatus == 1);
  CHECK(bad.stderrText.find("torchvision's models take colour pictures") != std::string::npos);
}
