// nn::save, nn::load, nn::loadStateInto and the safetensors reader and writer: round trips,
// the exact header, and truncated or corrupted files that must give errors, not crashes. Saving
// from device memory and loading into it run on every device type (tests/support/DeviceTest.h).
#include "nn/io/Serialize.h"

#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "nn/core/Options.h"
#include "nn/modules/BatchNormalization.h"
#include "nn/modules/Linear.h"
#include "nn/modules/ReLU.h"
#include "nn/modules/Sequential.h"
#include "nn/modules/SpatialAveragePooling.h"
#include "nn/modules/SpatialBatchNormalization.h"
#include "nn/modules/SpatialConvolution.h"
#include "nn/modules/SpatialMaxPooling.h"
#include "nn/modules/Tanh.h"
#include "nn/parallel/DataParallelTable.h"
#include "nn/tensor/Random.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/support/TempDir.h"

using nn::ModulePtr;
using nn::Tensor;

using nn::test::TempDir;

namespace {

// A fresh folder, removed with everything in it at the end of the test.

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

uint64_t headerLength(const std::string& file) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(file[static_cast<size_t>(i)]);
  return n;
}

std::string withHeaderLength(std::string file, uint64_t n) {
  for (int i = 0; i < 8; ++i) file[static_cast<size_t>(i)] = static_cast<char>(n >> (8 * i));
  return file;
}

// A safetensors file from a header text and a data section, as another writer might make it.
std::string rawFile(const std::string& header, const std::string& data) {
  return withHeaderLength(std::string(8, '\0') + header + data, header.size());
}

// A file holding no tensors and a module tree of one module.
void writeLeafTree(const std::string& path, const std::string& type, const std::string& config) {
  nn::writeSafetensors(
      path, {},
      {{"nn.module", R"({"type":")" + type + R"(","config":)" + config + R"(,"training":true,"children":[]})"}});
}

std::string floatBytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

// Sequential(Linear(3 -> 4), ReLU, Linear(4 -> 2)), with seeded parameters.
std::shared_ptr<nn::Sequential> mlp(uint64_t seed, int64_t hidden = 4) {
  nn::manualSeed(seed);
  auto model = std::make_shared<nn::Sequential>();
  model->add(std::make_shared<nn::Linear>(3, hidden));
  model->add(std::make_shared<nn::ReLU>());
  model->add(std::make_shared<nn::Linear>(hidden, 2));
  return model;
}

// Every value of the module's state, in stateDict order.
std::vector<std::vector<float>> stateValues(nn::Module& module) {
  std::vector<std::vector<float>> out;
  for (const nn::NamedTensor& t : module.stateDict()) out.push_back(t.value.toVector());
  return out;
}

// A module of a user's own, with a parameter, a buffer (like BatchNorm's running statistics)
// and options holding a list and a fraction: y = x + shift.
struct ShiftOptions {
  int64_t size = 0;
  std::vector<int64_t> pattern;
  double momentum = 0.1;

  template <typename F>
  void visit(F&& field) {
    field("size", size);
    field("pattern", pattern);
    field("momentum", momentum);
  }
};

class Shift : public nn::WithOptions<ShiftOptions> {
 public:
  Shift(int64_t size, std::vector<int64_t> pattern, double momentum)
      : Shift(Options{size, std::move(pattern), momentum}) {}
  explicit Shift(const Options& options) : WithOptions(options) {
    shift = Tensor::zeros({options.size});
    gradShift = Tensor::zeros({options.size});
    runningMean = Tensor::zeros({options.size});
    registerParameter("shift", &shift, &gradShift);
    registerBuffer("running_mean", &runningMean);
  }
  const Tensor& updateOutput(const Tensor& input) override {
    output.resizeAs_(input);
    output.copy_(input);
    for (int64_t i = 0; i < input.size(0); ++i)
      for (int64_t j = 0; j < options_.size; ++j) output.data()[i * options_.size + j] += shift.data()[j];
    return output;
  }
  const Tensor& updateGradInput(const Tensor&, const Tensor& gradOutput) override {
    gradInput.set_(gradOutput);
    return gradInput;
  }
  std::string typeName() const override { return "test.Shift"; }

  Tensor shift, gradShift, runningMean;
};

NN_REGISTER_MODULE_AS(Shift, "test.Shift");

}  // namespace

TEST_CASE("save then load rebuilds Sequential(Linear, ReLU, Linear) with equal state and output", "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("mlp.safetensors");
  auto model = mlp(1);
  model->get(2)->evaluate();
  nn::save(*model, path);

  const ModulePtr loaded = nn::load(path);
  REQUIRE(loaded->typeName() == "nn.Sequential");
  REQUIRE(loaded->toString() == model->toString());
  REQUIRE(stateValues(*loaded) == stateValues(*model));
  REQUIRE(loaded->device() == nn::Device::cpu(0));
  REQUIRE(loaded->isTraining());
  REQUIRE(loaded->children()[0]->isTraining());
  REQUIRE_FALSE(loaded->children()[2]->isTraining());
  const Tensor x = nn::test::randomTensor({5, 3}, 4);
  REQUIRE(nn::test::maxAbsDiff(loaded->forward(x), model->forward(x)) == 0);

  // The loaded module is independent of the saved one.
  model->get(0)->stateDict()[0].value.fill_(0);
  REQUIRE(stateValues(*loaded) != stateValues(*model));

  // Into an existing module of the same structure, all values arrive.
  auto other = mlp(2);
  REQUIRE(stateValues(*other) != stateValues(*loaded));
  nn::loadStateInto(*other, path);
  REQUIRE(stateValues(*other) == stateValues(*loaded));
}

TEST_CASE("a module used in two places is saved once with \"same_as\" and loads as one module again", "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("twice.safetensors");
  nn::manualSeed(12);
  auto twice = std::make_shared<nn::Linear>(3, 3);
  auto inner = std::make_shared<nn::Sequential>(std::vector<nn::ModulePtr>{std::make_shared<nn::Tanh>(), twice});
  nn::Sequential model{twice, inner, std::make_shared<nn::Linear>(3, 2)};
  const std::string tree = nn::describeModuleTree(model);
  CHECK(tree.find(R"({"same_as":"0"})") != std::string::npos);
  nn::save(model, path);

  const ModulePtr loaded = nn::load(path);
  REQUIRE(loaded->toString() == model.toString());
  const ModulePtr loadedInner = loaded->children()[1];
  CHECK(loadedInner->children()[1] == loaded->children()[0]);
  CHECK(stateValues(*loaded) == stateValues(model));
  CHECK(loaded->getParameters().first.numel() == 9 + 3 + 6 + 2);
  const Tensor x = nn::test::randomTensor({4, 3}, 5);
  CHECK(nn::test::maxAbsDiff(loaded->forward(x), model.forward(x)) == 0);

  // Its mode is its first place's, though the container of its second place is in the other.
  inner->training();
  twice->evaluate();
  nn::save(model, path);
  const ModulePtr modes = nn::load(path);
  CHECK_FALSE(modes->children()[0]->isTraining());
  CHECK(modes->children()[1]->isTraining());
  CHECK(modes->children()[1]->children()[0]->isTraining());

  // A "same_as" must name a module finished before it: not itself, an ancestor, a later place
  // or a place that does not exist; and it stands alone.
  const auto withTree = [&](const std::string& text) {
    nn::writeSafetensors(path, {}, {{"format", "pt"}, {"nn.module", text}});
  };
  const std::string relu = R"({"type":"nn.ReLU","config":{},"training":true,"children":[]})";
  const auto sequential = [](const std::string& children) {
    return R"({"type":"nn.Sequential","config":{},"training":true,"children":[)" + children + "]}";
  };
  withTree(sequential(relu + R"(,{"same_as":"0"})"));
  const ModulePtr two = nn::load(path);
  CHECK(two->children()[1] == two->children()[0]);
  withTree(sequential(R"({"same_as":"1"},)" + relu));
  CHECK_THROWS_WITH(nn::load(path), Catch::Contains(path) && Catch::Contains("module '0'") &&
                                        Catch::Contains("\"same_as\" names \"1\", not a module built before"));
  withTree(sequential(R"({"same_as":""})"));
  CHECK_THROWS_WITH(nn::load(path), Catch::Contains("not a module built before"));
  withTree(sequential(sequential(R"({"same_as":"0"})")));
  CHECK_THROWS_WITH(nn::load(path), Catch::Contains("module '0.0'") && Catch::Contains("not a module built before"));
  withTree(sequential(relu + R"(,{"same_as":"9"})"));
  CHECK_THROWS_WITH(nn::load(path), Catch::Contains("not a module built before"));
  withTree(sequential(relu + R"(,{"same_as":0})"));
  CHECK_THROWS_WITH(nn::load(path), Catch::Contains(R"(expected {"same_as": string})"));
  withTree(sequential(relu + R"(,{"same_as":"0","type":"nn.ReLU"})"));
  CHECK_THROWS_WITH(nn::load(path), Catch::Contains(R"(expected {"same_as": string})"));
}

TEST_CASE("a module in two places is written once, and a file whose two copies of it differ is refused",
          "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("twice.safetensors");
  nn::manualSeed(14);
  auto twice = std::make_shared<nn::Linear>(3, 3);
  nn::Sequential model{twice, std::make_shared<nn::Tanh>(), twice};
  nn::save(model, path);
  // Its tensors under its first place's names alone, as its module tree holds it once.
  std::vector<std::string> names;
  for (const nn::NamedTensor& t : nn::readSafetensors(path).tensors) names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"0.weight", "0.bias"});
  const Tensor x = nn::test::randomTensor({4, 3}, 15);
  CHECK(nn::test::maxAbsDiff(nn::load(path)->forward(x), model.forward(x)) == 0);

  // Files of earlier versions hold it at each place: equal copies load, into a tree and by name.
  const nn::Metadata metadata{{"format", "pt"}, {"nn.module", nn::describeModuleTree(model)}};
  std::vector<nn::NamedTensor> both = model.stateDict();
  REQUIRE(both.size() == 4);
  for (nn::NamedTensor& t : both) t.value = t.value.clone();
  nn::writeSafetensors(path, both, metadata);
  CHECK(nn::test::maxAbsDiff(nn::load(path)->forward(x), model.forward(x)) == 0);
  CHECK_NOTHROW(nn::loadStateInto(model, path));

  // Copies that differ: neither is taken, whichever comes later.
  both[2].value.data()[4] += 1.f;  // "2.weight"
  nn::writeSafetensors(path, both, metadata);
  // (Catch's combined matchers hold their parts by reference: each is written out in place.)
  CHECK_THROWS_WITH(nn::load(path), Catch::Contains(path) && Catch::Contains("'0.weight' and '2.weight'") &&
                                        Catch::Contains("two different copies"));
  const std::vector<float> before = model.getParameters().first.toVector();
  CHECK_THROWS_WITH(nn::loadStateInto(model, path),
                    Catch::Contains("'0.weight' and '2.weight'") && Catch::Contains("two different copies"));
  CHECK(model.getParameters().first.toVector() == before);
}

TEST_CASE("the header is safetensors JSON with PyTorch's names, contiguous offsets and the module tree",
          "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("mlp.safetensors");
  auto model = mlp(1);
  nn::save(*model, path);
  const std::string file = readBytes(path);
  const uint64_t n = headerLength(file);
  REQUIRE(n % 8 == 0);
  REQUIRE(file.size() == 8 + n + 4 * (12 + 4 + 8 + 2));
  const std::string header = file.substr(8, n);
  REQUIRE(header.front() == '{');
  // Data offsets in bytes: 0.weight [4, 3] is 48 bytes, 0.bias 16, 2.weight [2, 4] 32, 2.bias 8.
  REQUIRE_THAT(header, Catch::Contains(R"("0.weight":{"dtype":"F32","shape":[4,3],"data_offsets":[0,48]},)"
                                       R"("0.bias":{"dtype":"F32","shape":[4],"data_offsets":[48,64]},)"
                                       R"("2.weight":{"dtype":"F32","shape":[2,4],"data_offsets":[64,96]},)"
                                       R"("2.bias":{"dtype":"F32","shape":[2],"data_offsets":[96,104]}})"));
  REQUIRE_THAT(header, Catch::StartsWith(R"({"__metadata__":{"format":"pt","nn.module":)"));
  // The raw data of 2.weight is the weight's floats, little-endian, at 8 + n + 64.
  const std::vector<float> w2 = model->get(2)->stateDict()[0].value.toVector();
  REQUIRE(file.substr(8 + n + 64, 32) == floatBytes(w2));

  const nn::Metadata metadata = nn::readSafetensorsMetadata(path);
  REQUIRE(metadata.at("format") == "pt");
  REQUIRE(
      metadata.at("nn.module") ==
      R"({"type":"nn.Sequential","config":{},"training":true,"children":[)"
      R"({"type":"nn.Linear","config":{"inputSize":3,"outputSize":4,"bias":true},"training":true,"children":[]},)"
      R"({"type":"nn.ReLU","config":{"inplace":false},"training":true,"children":[]},)"
      R"({"type":"nn.Linear","config":{"inputSize":4,"outputSize":2,"bias":true},"training":true,"children":[]}]})");
}

TEST_CASE("a module with a buffer and list and fraction config entries round-trips", "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("shift.safetensors");
  auto model = std::make_shared<nn::Sequential>();
  auto shift = std::make_shared<Shift>(3, std::vector<int64_t>{2, 7, 1}, 0.1);
  shift->shift.copy_(Tensor::fromVector({3}, {1.5f, -2, 0.25f}));
  shift->runningMean.copy_(Tensor::fromVector({3}, {0.125f, 3, -7}));
  model->add(std::make_shared<nn::Linear>(2, 3)).add(shift);
  nn::save(*model, path);

  const ModulePtr loaded = nn::load(path);
  std::vector<std::string> names;
  for (const nn::NamedTensor& t : loaded->stateDict()) names.push_back(t.name);
  REQUIRE(names == std::vector<std::string>{"0.weight", "0.bias", "1.shift", "1.running_mean"});
  REQUIRE(stateValues(*loaded) == stateValues(*model));
  auto& copy = dynamic_cast<Shift&>(*loaded->children()[1]);
  REQUIRE(copy.options().pattern == std::vector<int64_t>{2, 7, 1});
  REQUIRE(copy.options().momentum == 0.1);
  REQUIRE(copy.runningMean.toVector() == std::vector<float>{0.125f, 3, -7});
}

TEST_CASE("extra metadata and tensors go through writeSafetensors and readSafetensors", "[Serialize]") {
  TempDir dir;
  auto model = mlp(1);
  nn::save(*model, dir.file("a.safetensors"), {{"epoch", "12"}, {"note", "lr 0.1"}});
  const nn::Metadata metadata = nn::readSafetensorsMetadata(dir.file("a.safetensors"));
  REQUIRE(metadata.at("epoch") == "12");
  REQUIRE(metadata.at("note") == "lr 0.1");
  REQUIRE_THROWS_WITH(nn::save(*model, dir.file("b.safetensors"), {{"format", "x"}}),
                      Catch::Contains("b.safetensors") && Catch::Contains("reserved"));

  // A caller's own tensors, here a checkpoint's momentum, keep their names, order and values.
  std::vector<nn::NamedTensor> tensors = model->stateDict();
  tensors.push_back({"optimizer.momentum.0", Tensor::fromVector({2, 2}, {1, 2, 3, 4})});
  tensors.push_back({"empty", Tensor::zeros({0, 5})});
  nn::writeSafetensors(dir.file("c.safetensors"), tensors, {{"kind", "checkpoint"}});
  const nn::SafetensorsContents read = nn::readSafetensors(dir.file("c.safetensors"));
  REQUIRE(read.metadata == nn::Metadata{{"kind", "checkpoint"}});
  REQUIRE(read.tensors.size() == tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    REQUIRE(read.tensors[i].name == tensors[i].name);
    REQUIRE(read.tensors[i].value.sizes() == tensors[i].value.sizes());
    REQUIRE(read.tensors[i].value.toVector() == tensors[i].value.toVector());
  }
  // Without the module tree, load refuses and points to loadStateInto.
  REQUIRE_THROWS_WITH(nn::load(dir.file("c.safetensors")), Catch::Contains("c.safetensors") &&
                                                               Catch::Contains("nn.module") &&
                                                               Catch::Contains("loadStateInto"));
  REQUIRE_THROWS_WITH(nn::writeSafetensors(dir.file("d.safetensors"), {tensors[0], tensors[0]}, {}),
                      Catch::Contains("0.weight") && Catch::Contains("unique"));
}

TEST_CASE("a safetensors file written by PyTorch loads into the equivalent module", "[Serialize]") {
  // Made with torch 1.13 and safetensors 0.8:
  //   torch.manual_seed(0)
  //   p = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
  //   safetensors.torch.save_file(p.state_dict(), f, metadata={"format": "pt"})
  //   p(torch.tensor([[0.5, -1, 2], [1, 1, 1]]))
  // The header below is the file's, byte for byte (safetensors sorts tensors by name, so the
  // data order differs from ours), and the floats are its 104 data bytes.
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"0.bias":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
      R"("0.weight":{"dtype":"F32","shape":[4,3],"data_offsets":[16,64]},)"
      R"("2.bias":{"dtype":"F32","shape":[2],"data_offsets":[64,72]},)"
      R"("2.weight":{"dtype":"F32","shape":[2,4],"data_offsets":[72,104]}})";
  const std::string data = floatBytes(
      {-0.551570714f, -0.382368743f, -0.237997115f,  0.0213871151f,  -0.00432251766f, 0.309715837f,   -0.475185335f,
       -0.424894601f, -0.222368971f, 0.154820725f,   -0.0114391446f, 0.457774937f,    -0.0512363985f, 0.152774125f,
       -0.174482793f, -0.11348708f,  -0.0805916786f, 0.0529070497f,  0.197667599f,    0.300011396f,   -0.338970542f,
       -0.217731416f, 0.181608558f,  0.415193975f,   -0.102900088f,  0.374155879f});
  TempDir dir;
  const std::string path = dir.file("torch.safetensors");
  writeBytes(path, rawFile(header, data));
  REQUIRE(readBytes(path).size() == 392);  // the size of PyTorch's file

  auto model = mlp(1);
  nn::loadStateInto(*model, path);
  REQUIRE(model->get(0)->stateDict()[1].value.toVector() ==
          std::vector<float>{-0.551570714f, -0.382368743f, -0.237997115f, 0.0213871151f});
  const Tensor x = Tensor::fromVector({2, 3}, {0.5f, -1, 2, 1, 1, 1});
  REQUIRE(nn::test::maxAbsDiff(model->forward(x), {-0.0904511735f, 0.069849886f, -0.133844733f, 0.036741212f}) < 1e-6);
}

NN_DEVICE_TEST_CASE("a module on another device is saved from host copies and loads on cpu:0", "[Serialize]") {
  // cpu:1 and cpu:2 on CPU runs, cuda:0 on CUDA runs. Copies between devices keep every bit, so
  // the values are compared exactly on either.
  TempDir dir;
  auto model = mlp(3);
  const auto values = stateValues(*model);
  const nn::Device saved = kind.compared();
  model->to(saved);
  REQUIRE(model->device() == saved);
  nn::save(*model, dir.file("m.safetensors"));
  const ModulePtr loaded = nn::load(dir.file("m.safetensors"));
  REQUIRE(loaded->device() == nn::Device::cpu(0));
  REQUIRE(stateValues(*loaded) == values);
  // And loadStateInto fills a module where it lives.
  const nn::Device target = kind.isCpu() ? nn::Device::cpu(2) : kind.device();
  auto into = mlp(4);
  into->to(target);
  nn::loadStateInto(*into, dir.file("m.safetensors"));
  REQUIRE(into->device() == target);
  REQUIRE(stateValues(*into) == values);
}

TEST_CASE("a file truncated anywhere is an error naming it, and loads nothing", "[Serialize]") {
  TempDir dir;
  const std::string good = dir.file("good.safetensors");
  const std::string path = dir.file("cut.safetensors");
  nn::save(*mlp(1), good);
  const std::string file = readBytes(good);
  const size_t n = headerLength(file);
  std::vector<size_t> cuts;
  for (size_t k = 0; k < 20; ++k) cuts.push_back(file.size() * k / 20);
  for (size_t c : {size_t{1}, size_t{7}, size_t{8}, size_t{9}, 8 + n - 1, 8 + n, 8 + n + 1, file.size() - 1})
    cuts.push_back(c);

  auto target = mlp(2);
  const auto before = stateValues(*target);
  for (size_t cut : cuts) {
    INFO("cut at byte " << cut << " of " << file.size());
    writeBytes(path, file.substr(0, cut));
    REQUIRE_THROWS_WITH(nn::load(path), Catch::Contains(path));
    REQUIRE_THROWS_WITH(nn::loadStateInto(*target, path), Catch::Contains(path));
    REQUIRE(stateValues(*target) == before);
  }
  // Cut inside the data, the message names the tensor whose data is incomplete.
  writeBytes(path, file.substr(0, file.size() - 1));
  REQUIRE_THROWS_WITH(nn::load(path), Catch::Contains(path) && Catch::Contains("tensor '2.bias'") &&
                                          Catch::Contains("outside the data section"));
  REQUIRE_THROWS_WITH(nn::load(dir.file("none.safetensors")),
                      Catch::Contains(dir.file("none.safetensors")) && Catch::Contains("cannot open"));
}

TEST_CASE("a corrupted header length or header is an error naming the file", "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("bad.safetensors");
  nn::save(*mlp(1), dir.file("good.safetensors"));
  const std::string file = readBytes(dir.file("good.safetensors"));
  const uint64_t n = headerLength(file);
  for (uint64_t length : {uint64_t{0}, n - 8, n + 8, uint64_t{file.size()}, ~uint64_t{0}, uint64_t{1} << 40}) {
    INFO("header length " << length << " instead of " << n);
    writeBytes(path, withHeaderLength(file, length));
    REQUIRE_THROWS_WITH(nn::load(path), Catch::Contains(path));
  }
  std::string broken = file;
  broken[8 + 2] = '\x01';  // inside "__metadata__"
  writeBytes(path, broken);
  REQUIRE_THROWS_WITH(nn::load(path), Catch::Contains(path) && Catch::Contains("not valid JSON"));

  std::string f16 = file;
  f16.replace(f16.find("\"F32\""), 5, "\"F16\"");
  writeBytes(path, f16);
  REQUIRE_THROWS_WITH(nn::load(path), Catch::Contains(path) && Catch::Contains("tensor '0.weight'") &&
                                          Catch::Contains("shape [4, 3] of F16 needs 24"));
}

TEST_CASE("offsets that overlap, leave gaps or disagree with the shape are errors naming the tensor", "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("raw.safetensors");
  const std::string twelve = floatBytes({1, 2, 3});
  const auto expectError = [&](const std::string& header, const std::string& data, const std::string& what) {
    INFO(header);
    writeBytes(path, rawFile(header, data));
    REQUIRE_THROWS_WITH(nn::readSafetensors(path), Catch::Contains(path) && Catch::Contains(what));
  };
  // A file another writer made, with keys in any order and no padding, reads.
  writeBytes(path, rawFile(R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},)"
                           R"("a":{"shape":[2],"dtype":"F32","data_offsets":[0,8]}})",
                           twelve));
  const nn::SafetensorsContents ok = nn::readSafetensors(path);
  REQUIRE(ok.tensors.size() == 2);
  REQUIRE(ok.tensors[0].name == "a");
  REQUIRE(ok.tensors[0].value.toVector() == std::vector<float>{1, 2});
  REQUIRE(ok.tensors[1].value.toVector() == std::vector<float>{3});

  expectError(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
              R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
              floatBytes({1, 2}), "tensor 'b'");
  expectError(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
              R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
              twelve, "overlap");
  expectError(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
              R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
              twelve, "gap");
  expectError(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", twelve, "4 bytes after");
  expectError(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]},)"
              R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
              twelve, "needs 12");
  expectError(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", twelve, "outside the data section");
  expectError(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[-4,8]}})", twelve, "tensor 'a'");
  expectError(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,12]}})", twelve, "tensor 'a'");
  expectError(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4611686018427387904],"data_offsets":[0,12]}})",
              twelve, "needs more than 2^62");
  // No bytes, but strides over 2^62 x 2^62 elements.
  expectError(R"({"a":{"dtype":"F32","shape":[0,4611686018427387904,4611686018427387904],"data_offsets":[0,0]}})", "",
              "is too large");
  expectError(R"({"a":{"dtype":"F32","shape":[3]}})", twelve, "data_offsets");
  expectError(R"({"__metadata__":{"epoch":3},"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})", twelve,
              "metadata 'epoch'");
  expectError(R"([1, 2])", twelve, "JSON object");
}

TEST_CASE("a shape mismatch, a missing or an extra tensor loads nothing and names the tensor", "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("mlp.safetensors");
  nn::save(*mlp(1), path);

  auto wider = mlp(2, 5);
  const auto before = stateValues(*wider);
  REQUIRE_THROWS_WITH(nn::loadStateInto(*wider, path), Catch::Contains(path) && Catch::Contains("'0.weight'") &&
                                                           Catch::Contains("[4, 3]") && Catch::Contains("[5, 3]"));
  REQUIRE(stateValues(*wider) == before);

  auto deeper = mlp(2);
  deeper->add(std::make_shared<nn::Linear>(2, 2));
  REQUIRE_THROWS_WITH(nn::loadStateInto(*deeper, path),
                      Catch::Contains(path) && Catch::Contains("'3.weight' is missing"));

  auto shorter = std::make_shared<nn::Sequential>();
  shorter->add(std::make_shared<nn::Linear>(3, 4));
  REQUIRE_THROWS_WITH(nn::loadStateInto(*shorter, path),
                      Catch::Contains(path) && Catch::Contains("unexpected tensor '2.weight'"));
}

TEST_CASE("a corrupted module tree is an error naming the file and the module", "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("tree.safetensors");
  const auto withTree = [&](const std::string& tree) {
    nn::writeSafetensors(path, {}, {{"format", "pt"}, {"nn.module", tree}});
  };
  withTree(R"({"type":"nn.Nope","config":{},"training":true,"children":[]})");
  REQUIRE_THROWS_WITH(nn::load(path), Catch::Contains(path) && Catch::Contains("nn.Nope"));
  withTree(R"({"type":"nn.Sequential","config":{},"training":true,"children":[)"
           R"({"type":"nn.Linear","config":{"inputSize":3},"training":true,"children":[]}]})");
  REQUIRE_THROWS_WITH(nn::load(path), Catch::Contains(path) && Catch::Contains("module '0'") &&
                                          Catch::Contains("nn.Linear: config entry 'outputSize' is missing"));
  withTree(R"({"type":"nn.ReLU","config":{"x":"y"},"training":true,"children":[]})");
  REQUIRE_THROWS_WITH(nn::load(path), Catch::Contains(path) && Catch::Contains("unknown config entry 'x'"));
  // Each entry must have its field's type: a flag, an integer, a list.
  withTree(
      R"({"type":"nn.Linear","config":{"inputSize":3,"outputSize":4,"bias":"yes"},"training":true,"children":[]})");
  REQUIRE_THROWS_WITH(nn::load(path),
                      Catch::Contains("config entry 'bias': expected a flag (true or false), got text 'yes'"));
  withTree(
      R"({"type":"nn.Linear","config":{"inputSize":3.5,"outputSize":4,"bias":true},"training":true,"children":[]})");
  REQUIRE_THROWS_WITH(nn::load(path),
                      Catch::Contains("config entry 'inputSize': expected an integer, got a number 3.5"));
  withTree(R"({"type":"nn.Linear","config":{"inputSize":3,"outputSize":4,"bias":2},"training":true,"children":[]})");
  REQUIRE_THROWS_WITH(nn::load(path),
                      Catch::Contains("config entry 'bias': expected a flag (true or false), got an integer 2"));
  withTree(R"({"type":"nn.View","config":{"sizes":4},"training":true,"children":[]})");
  REQUIRE_THROWS_WITH(nn::load(path),
                      Catch::Contains("config entry 'sizes': expected a list of integers, got an integer 4"));
  withTree(R"({"type":"nn.Tanh","config":{"inplace":true},"training":true,"children":[]})");
  REQUIRE_THROWS_WITH(nn::load(path), Catch::Contains("nn.Tanh: takes no arguments, got config entry 'inplace'"));
  withTree(R"({"type":"nn.ReLU"})");
  REQUIRE_THROWS_WITH(nn::load(path), Catch::Contains(path) && Catch::Contains("root"));
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += R"({"type":"nn.Sequential","config":{},"training":true,"children":[)";
  for (int i = 0; i < 5000; ++i) deep += "]}";
  withTree(deep);
  REQUIRE_THROWS_WITH(nn::load(path), Catch::Contains(path) && Catch::Contains("nested more than"));
  withTree(R"({"type":)");
  REQUIRE_THROWS_WITH(nn::load(path), Catch::Contains(path) && Catch::Contains("not valid JSON"));
}

TEST_CASE("a module tree whose sizes overflow is an error naming the file", "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("tree.safetensors");
  const auto expectError = [&](const std::string& type, const std::string& config) {
    INFO(type << " " << config);
    writeLeafTree(path, type, config);
    REQUIRE_THROWS_WITH(nn::load(path),
                        Catch::Contains(path) && Catch::Contains(type) && Catch::Contains("hold more than"));
  };
  // 4e15 * 4e15 overflows int64.
  expectError("nn.View", R"({"sizes":[4000000000000000,4000000000000000]})");
  expectError("nn.Reshape", R"({"sizes":[4000000000000000,4000000000000000],"batchMode":0})");
  expectError("nn.Linear", R"({"inputSize":1125899906842624,"outputSize":1125899906842624,"bias":1})");
  // 2^62 floats are 2^64 bytes, which wrapped to 0 in size_t.
  expectError("nn.Linear", R"({"inputSize":2147483648,"outputSize":2147483648,"bias":1})");
}

TEST_CASE("a module tree whose shared modules double at every level is refused before its places explode",
          "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("tree.safetensors");
  // Level k: a Sequential of level k - 1 twice, the second time as "same_as" the first: 2^60
  // places of one ReLU, from a few kilobytes of tree.
  std::function<std::string(int, const std::string&)> tree = [&](int level, const std::string& where) {
    if (level == 0) return std::string(R"({"type":"nn.ReLU","config":{},"training":true,"children":[]})");
    const std::string first = where.empty() ? "0" : where + ".0";
    return R"({"type":"nn.Sequential","config":{},"training":true,"children":[)" + tree(level - 1, first) +
           R"(,{"same_as":")" + first + R"("}]})";
  };
  nn::writeSafetensors(path, {}, {{"nn.module", tree(60, "")}});
  const auto started = std::chrono::steady_clock::now();
  REQUIRE_THROWS_WITH(nn::load(path), Catch::Contains(path) && Catch::Contains("places"));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
}

TEST_CASE("a module tree that would allocate far more than the file's tensors is an error naming it", "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("tree.safetensors");
  // 6.4 GB of weights and as much of gradients, for a file without tensors.
  writeLeafTree(path, "nn.Linear", R"({"inputSize":40000,"outputSize":40000,"bias":1})");
  REQUIRE_THROWS_WITH(nn::load(path), Catch::Contains(path) && Catch::Contains("nn.Linear") &&
                                          Catch::Contains("would exceed the limit"));
  // The limit leaves room for the file's tensors: modules of every kind with state, each
  // larger than the limit's slack of 1 MB, load.
  auto big = std::make_shared<nn::Sequential>();
  big->add(std::make_shared<nn::SpatialConvolution>(64, 128, 5, 5));
  big->add(std::make_shared<nn::SpatialBatchNormalization>(300000));
  big->add(std::make_shared<nn::BatchNormalization>(300000));
  big->add(std::make_shared<nn::Linear>(1000, 1000));
  nn::save(*big, path);
  REQUIRE(stateValues(*nn::load(path)) == stateValues(*big));
}

TEST_CASE("a header nested a million levels deep is an error naming the file", "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("deep.safetensors");
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  writeBytes(path, rawFile(R"({"a":)" + deep + "}", ""));
  REQUIRE_THROWS_WITH(nn::readSafetensors(path),
                      Catch::Contains(path + ": the header is nested more than 8 levels deep"));
  // Brackets inside strings do not count.
  writeBytes(path, rawFile(R"({"__metadata__":{"x":")" + std::string(100, '[') + R"("}})", ""));
  REQUIRE(nn::readSafetensors(path).metadata.at("x") == std::string(100, '['));
  nn::writeSafetensors(path, {}, {{"nn.module", deep}});
  REQUIRE_THROWS_WITH(nn::load(path), Catch::Contains(path + ": module tree: the description is nested more than"));
}

TEST_CASE("refusing a header of 100 MB costs neither gigabytes nor seconds", "[Serialize][nosanitizer]") {
  // Headers of just under safetensors' limit of 100 MiB: nested brackets, and a shape of 52
  // million zeros. Parsed, they took 4 GB and 2 GB of memory; checked first, a pass over the
  // bytes. (Not under the sanitizers, whose memory accounting differs.)
  TempDir dir;
  const std::string path = dir.file("huge.safetensors");
  const size_t n = (size_t{100} << 20) - 64;
  const std::string nested = R"({"a":)" + std::string(n / 2, '[') + std::string(n / 2, ']') + "}";
  std::string zeros = R"({"a":{"dtype":"F32","shape":[0)";
  zeros.reserve(n);
  while (zeros.size() + 40 < n) zeros += ",0";
  zeros += R"(],"data_offsets":[0,0]}})";
  for (const std::string* header : std::vector<const std::string*>{&nested, &zeros}) {
    writeBytes(path, rawFile(*header, ""));
    std::ofstream("/proc/self/clear_refs") << "5";  // resets the peak memory to the current
    const auto start = std::chrono::steady_clock::now();
    REQUIRE_THROWS_AS(nn::readSafetensors(path), nn::Error);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::ifstream status("/proc/self/status");
    int64_t peakKb = -1;
    for (std::string line; std::getline(status, line);)
      if (line.rfind("VmHWM:", 0) == 0) peakKb = std::stoll(line.substr(6));
    CHECK(peakKb > 0);
    CHECK(peakKb < (int64_t{1} << 20));  // under 1 GB: the file's bytes twice and the test's copy
    CHECK(seconds < 10);
  }
}

TEST_CASE("a failed save leaves the old file intact and no temporary file behind", "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("model.safetensors");
  nn::save(*mlp(1), path);
  const std::string old = readBytes(path);

  // A write that fails half-way: a file size limit far below the new file's 40 KB.
  auto big = std::make_shared<nn::Sequential>();
  big->add(std::make_shared<nn::Linear>(100, 100));
  std::signal(SIGXFSZ, SIG_IGN);  // the limit then makes write() fail with EFBIG instead of a signal
  rlimit saved{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &saved) == 0);
  rlimit small = saved;
  small.rlim_cur = 1000;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  std::string message;
  try {
    nn::save(*big, path);
  } catch (const nn::Error& e) {
    message = e.what();
  }
  REQUIRE(setrlimit(RLIMIT_FSIZE, &saved) == 0);
  std::signal(SIGXFSZ, SIG_DFL);
  REQUIRE_THAT(message, Catch::Contains(path) && Catch::Contains("cannot write"));
  REQUIRE(readBytes(path) == old);

  REQUIRE_THROWS_WITH(nn::save(*big, dir.file("missing/model.safetensors")),
                      Catch::Contains(dir.file("missing/model.safetensors")));
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) left.push_back(entry.path().string());
  REQUIRE(left == std::vector<std::string>{path});

  // And a save that works replaces the file.
  nn::save(*big, path);
  REQUIRE(nn::load(path)->stateDict()[0].value.hasSizes({100, 100}));
}

TEST_CASE("a file written before module arguments were typed loads with every setting", "[Serialize]") {
  // tests/fixtures/every-module-before-options.safetensors was written by an earlier version, which
  // stored every number as a double (flags as 0 and 1, integers as integral doubles): a
  // DataParallelTable on cpu:0,cpu:1 (buffer policy Average, NCCL off) around one of every
  // module with settings other than the defaults, in evaluation mode.
  const nn::ModulePtr loaded = nn::load("tests/fixtures/every-module-before-options.safetensors");
  const std::string expected = R"(nn.DataParallelTable(dim 0, cpu:0, cpu:1) {
  (1): nn.Sequential {
    [input -> (1) -> (2) -> (3) -> (4) -> (5) -> (6) -> (7) -> (8) -> (9) -> (10) -> (11) -> (12) -> (13) -> (14) -> output]
    (1): nn.SpatialConvolution(1 -> 3, 3x2, 2,1, 1,0)
    (2): nn.SpatialBatchNormalization(3, eps=0.001, momentum=0.2)
    (3): nn.ReLU(true)
    (4): nn.SpatialAveragePooling(2x2, 1,1, 1,1)
    (5): nn.SpatialMaxPooling(3x3, 2,2, 1,1)
    (6): nn.View(-1, 12)
    (7): nn.Concat {
      input
        |`-> (1): nn.Sequential {
        |      [input -> (1) -> (2) -> output]
        |      (1): nn.Linear(12 -> 4) without bias
        |      (2): nn.Tanh
        |    }
         `-> (2): nn.Sequential {
               [input -> (1) -> (2) -> (3) -> output]
               (1): nn.Linear(12 -> 2)
               (2): nn.Sigmoid
               (3): nn.Dropout(0.25)
             }
         ... -> output
    }
    (8): nn.BatchNormalization(6, affine=false)
    (9): nn.Reshape(3x2)
    (10): nn.Reshape(6)
    (11): nn.Identity
    (12): nn.ReLU
    (13): nn.SoftMax
    (14): nn.LogSoftMax
  }
})";
  CHECK(loaded->toString() == expected);
  auto table = std::dynamic_pointer_cast<nn::DataParallelTable>(loaded);
  REQUIRE(table);
  CHECK(table->bufferPolicy() == nn::DataParallelTable::BufferPolicy::Average);
  CHECK(table->devices() == std::vector<nn::Device>{nn::Device::cpu(0), nn::Device::cpu(1)});
  // Its flags were written as 0 and 1.
  CHECK(table->options().flattenParams);
  CHECK_FALSE(table->options().useNCCL);
  CHECK_FALSE(table->isTraining());
  const std::vector<nn::ModulePtr> modules = table->get(0)->listModules();
  // The settings toString() leaves out: ceil mode, the divisor without padding, batch mode.
  auto average = std::dynamic_pointer_cast<nn::SpatialAveragePooling>(modules[4]);
  REQUIRE(average);
  CHECK(average->ceilMode());
  CHECK_FALSE(average->countIncludePad());
  auto max = std::dynamic_pointer_cast<nn::SpatialMaxPooling>(modules[5]);
  REQUIRE(max);
  CHECK(max->ceilMode());
  // The output the writing version computed for this input, to the last bit.
  std::vector<float> values(112);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 13) * 0.25f - 1.f;
  const Tensor x = Tensor::fromVector({2, 1, 7, 8}, values);
  CHECK(table->forward(x).toVector() ==
        std::vector<float>{-1.82559657f, -1.8160367f,  -1.81026244f, -1.82559657f, -1.75499511f, -1.72278285f,
                           -1.81564522f, -1.81064951f, -1.82261515f, -1.82261515f, -1.75730312f, -1.72594547f,
                           -1.82010305f, -1.81943405f, -1.82022798f, -1.81983817f, -1.74140072f, -1.73410547f,
                           -1.81532657f, -1.80316806f, -1.82033443f, -1.82540131f, -1.7573452f,  -1.73266578f,
                           -1.8212564f,  -1.81880951f, -1.8212564f,  -1.8212564f,  -1.75471246f, -1.71837509f,
                           -1.82032728f, -1.82032728f, -1.82032728f, -1.82032728f, -1.74155331f, -1.73239076f});
}
