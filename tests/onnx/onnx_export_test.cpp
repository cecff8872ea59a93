// nn::exportOnnx: every exportable module alone, the containers and tables, LeNet and the
// residual network, each exported with an example batch of 3, checked by ONNX's checker, and
// run by ONNX Runtime at batches of 3 and 5, its outputs within 1e-5 (relative beyond 1) of
// this library's forward. Where ONNX Runtime cannot be installed (tools/reference-venv.sh)
// the export and the checker still run and the comparison is skipped, never passed. Then the
// refusals, and a module of one's own with its registered export.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

// ONNX's protobuf classes, as Debian's libonnx builds them (nn/onnx/Onnx.h), to read what the
// exporter declares.
#define ONNX_NAMESPACE onnx
#define ONNX_ML 1
#include <onnx/onnx_pb.h>

#include "examples/LeNet.h"
#include "examples/ResNet.h"
#include "nn/nn.h"
#include "nn/onnx/Export.h"
#include "nn/onnx/Exporter.h"
#include "nn/parallel/DataParallelTable.h"
#include "tests/support/ExampleRun.h"
#include "tests/support/OnnxRuntime.h"
#include "tests/support/Skip.h"
#include "tests/support/TempDir.h"

namespace {

using nn::Activity;
using nn::ModulePtr;
using nn::Table;
using nn::Tensor;
using nn::test::TempDir;

struct Case {
  std::string name;
  ModulePtr module;
  // The input for a batch of `batch` samples.
  std::function<Activity(int64_t batch)> input;
};

// Normal(0, 1) floats of [batch, sample...], the same for the same seed and batch.
std::function<Activity(int64_t)> normal(std::vector<int64_t> sample, uint64_t seed = 1) {
  return [sample, seed](int64_t batch) {
    std::vector<int64_t> sizes{batch};
    sizes.insert(sizes.end(), sample.begin(), sample.end());
    nn::Generator generator(seed * 1000 + static_cast<uint64_t>(batch));
    return Activity(Tensor::randn(sizes, generator));
  };
}

// A table of normal tensors, one per sample shape.
std::function<Activity(int64_t)> normalTable(std::vector<std::vector<int64_t>> samples) {
  return [samples](int64_t batch) {
    Table table;
    for (size_t i = 0; i < samples.size(); ++i) table.push_back(normal(samples[i], 10 + i)(batch));
    return Activity(table);
  };
}

void randomise(const Tensor& t, uint64_t seed, float low, float high) {
  nn::Generator generator(seed);
  Tensor r = Tensor::rand(t.sizes(), generator);
  std::vector<float> v = r.toVector();
  for (float& x : v) x = low + (high - low) * x;
  Tensor(t).copy_(Tensor::fromVector(t.sizes(), v));
}

// Every parameter and buffer of `m` random, running variances positive.
ModulePtr randomised(ModulePtr m) {
  uint64_t seed = 7;
  for (const nn::NamedTensor& t : m->stateDict()) {
    const bool variance = t.name.find("running_var") != std::string::npos;
    randomise(t.value, seed++, variance ? 0.5f : -1.f, variance ? 2.f : 1.f);
  }
  return m;
}

void requireClose(const std::string& what, const Tensor& got, const Tensor& expected) {
  INFO(what << ": ONNX Runtime " << got.shapeString() << ", forward " << expected.shapeString());
  REQUIRE(got.sizes() == expected.sizes());
  const std::vector<float> a = got.toVector(), b = expected.toVector();
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double excess = std::fabs(double{a[i]} - b[i]) / std::max(1.0, std::fabs(double{b[i]}));
    if (!(excess <= worst)) {
      worst = excess;
      at = i;
    }
  }
  INFO("largest difference at element " << at << ": " << (a.empty() ? 0.f : a[at]) << " against "
                                        << (b.empty() ? 0.f : b[at]));
  REQUIRE(worst <= 1e-5);
}

// Exports each case at batch 3 into `dir`, checks the file, and compares ONNX Runtime's
// outputs at batches 3 and 5 with the module's forward.
void exportAndCompare(const std::vector<Case>& cases, const TempDir& dir) {
  nn::test::OnnxRuntimeRuns runs;
  struct Expected {
    std::string what;
    size_t run;
    std::vector<std::pair<std::string, Tensor>> outputs;
  };
  std::vector<Expected> expected;
  for (const Case& c : cases) {
    INFO(c.name);
    const std::string path = dir.file(c.name + ".onnx");
    nn::exportOnnx(*c.module, c.input(3), path);
    REQUIRE_NOTHROW(nn::checkOnnxFile(path));
    c.module->evaluate();
    for (int64_t batch : {3, 5}) {
      const Activity input = c.input(batch);
      // Queued before the forward, which a module in place runs on the input itself.
      const size_t run = runs.add(path, input);
      std::vector<std::pair<std::string, Tensor>> outputs;
      for (const auto& [name, t] : nn::test::namedTensors(c.module->forward(input), "output"))
        outputs.emplace_back(name, t.clone());
      expected.push_back({c.name + " at batch " + std::to_string(batch), run, outputs});
    }
  }
  const std::string python = nn::test::referencePython();
  if (python.empty())
    NN_SKIP("ONNX Runtime is not installed (tools/reference-venv.sh); the exports passed the checker");
  runs.run(python);
  for (const Expected& e : expected)
    for (const auto& [name, t] : e.outputs) requireClose(e.what + ", " + name, runs.output(e.run, name), t);
}

ModulePtr sequential(std::initializer_list<ModulePtr> modules) { return std::make_shared<nn::Sequential>(modules); }

template <typename C>
ModulePtr container(std::initializer_list<ModulePtr> modules, std::shared_ptr<C> c = std::make_shared<C>()) {
  for (const ModulePtr& m : modules) c->add(m);
  return c;
}

}  // namespace

TEST_CASE("exportOnnx: layers with parameters run in ONNX Runtime as in forward", "[onnx]") {
  TempDir dir;
  auto noBias = nn::make<nn::Linear>(6, 4, false);
  std::vector<Case> cases{
      {"linear", randomised(nn::make<nn::Linear>(6, 4)), normal({6})},
      {"linear_without_bias", randomised(noBias), normal({6})},
      {"convolution", randomised(nn::make<nn::SpatialConvolution>(3, 4, 3, 3, 1, 1, 1, 1)), normal({3, 7, 7})},
      {"convolution_strided", randomised(nn::make<nn::SpatialConvolution>(2, 3, 3, 2, 2, 1, 0, 1)), normal({2, 8, 7})},
      {"convolution_dilated", randomised(nn::make<nn::SpatialDilatedConvolution>(3, 2, 3, 3, 1, 1, 2, 2, 2, 2)),
       normal({3, 7, 7})},
      {"convolution_grouped",
       randomised(nn::make<nn::SpatialConvolution>(nn::SpatialConvolution::Options{4, 6, 3, 2, 2, 1, 1, 0, 1, 1, 2})),
       normal({4, 8, 7})},
      {"convolution_depthwise",
       randomised(nn::make<nn::SpatialConvolution>(nn::SpatialConvolution::Options{3, 6, 3, 3, 1, 1, 1, 1, 1, 1, 3})),
       normal({3, 7, 7})},
      {"full_convolution", randomised(nn::make<nn::SpatialFullConvolution>(3, 2, 3, 3, 2, 2, 1, 1, 1, 1)),
       normal({3, 5, 5})},
      {"batch_normalization", randomised(nn::make<nn::BatchNormalization>(5)), normal({5})},
      {"spatial_batch_normalization", randomised(nn::make<nn::SpatialBatchNormalization>(3, 1e-3f)), normal({3, 4, 4})},
      {"batch_normalization_not_affine", randomised(nn::make<nn::SpatialBatchNormalization>(3, 1e-5f, 0.1f, false)),
       normal({3, 4, 4})},
      {"layer_norm", randomised(nn::make<nn::LayerNorm>(std::vector<int64_t>{6})), normal({4, 6})},
      {"layer_norm_two_dims", randomised(nn::make<nn::LayerNorm>(std::vector<int64_t>{3, 5}, 1e-3f)),
       normal({2, 3, 5})},
      {"layer_norm_not_affine", nn::make<nn::LayerNorm>(std::vector<int64_t>{5}, 1e-5f, false), normal({5})},
      {"group_norm", randomised(nn::make<nn::GroupNorm>(2, 6)), normal({6, 3, 4})},
      {"group_norm_flat", randomised(nn::make<nn::GroupNorm>(3, 6, 1e-3f)), normal({6})},
      {"group_norm_not_affine", nn::make<nn::GroupNorm>(3, 3, 1e-5f, false), normal({3, 2, 2, 2})},
      {"prelu_per_plane", randomised(nn::make<nn::PReLU>(3)), normal({3, 4, 4})},
      {"prelu_shared", randomised(nn::make<nn::PReLU>()), normal({3, 4})},
      {"mul", randomised(nn::make<nn::Mul>()), normal({3, 4})},
      {"cmul_per_plane", randomised(nn::make<nn::CMul>(std::vector<int64_t>{1, 3, 1, 1})), normal({3, 4, 4})},
      {"cmul_sample", randomised(nn::make<nn::CMul>(std::vector<int64_t>{3, 4})), normal({3, 4})},
      {"add", randomised(nn::make<nn::Add>(4)), normal({4})},
      {"add_per_sample_flattened", randomised(nn::make<nn::Add>(12)), normal({3, 4})},
      {"add_scalar", randomised(nn::make<nn::Add>(4, true)), normal({4})},
  };
  // Indices 0 to 9 as floats.
  cases.push_back({"lookup_table", randomised(nn::make<nn::LookupTable>(10, 4)), [](int64_t batch) {
                     std::vector<float> v;
                     for (int64_t i = 0; i < batch * 5; ++i) v.push_back(static_cast<float>((i * 7 + 3) % 10));
                     return Activity(Tensor::fromVector({batch, 5}, v));
                   }});
  exportAndCompare(cases, dir);
}

TEST_CASE("exportOnnx: activations run in ONNX Runtime as in forward", "[onnx]") {
  TempDir dir;
  const auto x = normal({3, 4, 5}, 3);
  // Far from 0 on both sides, where an exp, erf or tanh saturates.
  const auto far = [](int64_t b) {
    std::vector<float> v;
    for (int64_t i = 0; i < b; ++i) v.insert(v.end(), {-120.f, -30.f, 30.f, 120.f});
    return Activity(Tensor::fromVector({b, 4}, v));
  };
  exportAndCompare(
      {
          {"relu", nn::make<nn::ReLU>(), x},
          {"relu_in_place", nn::make<nn::ReLU>(true), x},
          {"relu6", nn::make<nn::ReLU6>(),
           [](int64_t b) {
             return Activity(Tensor::full({b, 8}, 7.f));
           }},
          {"leaky_relu", nn::make<nn::LeakyReLU>(0.1f), x},
          {"elu", nn::make<nn::ELU>(0.7f), x},
          {"tanh", nn::make<nn::Tanh>(), x},
          {"sigmoid", nn::make<nn::Sigmoid>(), x},
          {"softsign", nn::make<nn::SoftSign>(), x},
          {"log_sigmoid", nn::make<nn::LogSigmoid>(), x},
          // -120 stays -120, not log(0).
          {"log_sigmoid_far", nn::make<nn::LogSigmoid>(), far},
          {"silu", nn::make<nn::SiLU>(), x},
          {"gelu", nn::make<nn::GELU>(), x},
          {"gelu_tanh", nn::make<nn::GELU>("tanh"), x},
          // 0 below and x itself above, as the modules give them.
          {"silu_far", nn::make<nn::SiLU>(), far},
          {"gelu_far", nn::make<nn::GELU>(), far},
          {"gelu_tanh_far", nn::make<nn::GELU>("tanh"), far},
          {"softplus", nn::make<nn::SoftPlus>(), x},
          {"softplus_beta_threshold", nn::make<nn::SoftPlus>(2.f, 1.f), x},
          {"hardtanh", nn::make<nn::HardTanh>(-0.5f, 0.7f), x},
          {"threshold", nn::make<nn::Threshold>(0.2f, -1.f), x},
          {"softmax", nn::make<nn::SoftMax>(), normal({7})},
          {"softmax_planes", nn::make<nn::SoftMax>(), x},
          {"log_softmax", nn::make<nn::LogSoftMax>(), normal({7})},
          {"log_softmax_planes", nn::make<nn::LogSoftMax>(), x},
          {"dropout", nn::make<nn::Dropout>(0.3f), x},
          {"spatial_dropout", nn::make<nn::SpatialDropout>(0.3f), normal({2, 3, 3})},
          {"mul_constant", nn::make<nn::MulConstant>(1.5f), x},
          {"add_constant", nn::make<nn::AddConstant>(-0.5f), x},
          {"mul_constant_in_place", nn::make<nn::MulConstant>(1.5f, true), x},
          {"add_constant_in_place", nn::make<nn::AddConstant>(-0.5f, true), x},
      },
      dir);
}

TEST_CASE("exportOnnx: shapes, padding and resampling run in ONNX Runtime as in forward", "[onnx]") {
  TempDir dir;
  const auto x = normal({4, 5, 6}, 4);
  auto ceil = std::make_shared<nn::SpatialMaxPooling>(2, 2, 2, 2);
  ceil->ceil();
  nn::SpatialAveragePooling::Options excludePad{nn::PoolingWindow{3, 3, 2, 2, 1, 1}, false};
  exportAndCompare(
      {
          {"view", nn::make<nn::View>(std::vector<int64_t>{-1, 120}), x},
          {"reshape", nn::make<nn::Reshape>(std::vector<int64_t>{20, 6}), x},
          {"transpose", nn::make<nn::Transpose>(std::initializer_list<std::pair<int, int>>{{1, 2}, {2, 3}}), x},
          {"narrow", nn::make<nn::Narrow>(1, 1, 2), x},
          {"narrow_from_end", nn::make<nn::Narrow>(2, -3, -1), x},
          {"select", nn::make<nn::Select>(3, -2), x},
          {"identity", nn::make<nn::Identity>(), x},
          {"zero_padding", nn::make<nn::SpatialZeroPadding>(1, 2, 0, 3), x},
          {"zero_padding_cropping", nn::make<nn::SpatialZeroPadding>(-1, 2, 1, -2), x},
          {"up_sampling", nn::make<nn::SpatialUpSamplingNearest>(2), x},
          {"max_pooling", nn::make<nn::SpatialMaxPooling>(2, 2, 2, 2), x},
          {"max_pooling_padded", nn::make<nn::SpatialMaxPooling>(3, 3, 2, 2, 1, 1), x},
          {"max_pooling_ceil", ceil, normal({2, 7, 7})},
          {"average_pooling", nn::make<nn::SpatialAveragePooling>(3, 3, 2, 2, 1, 1), x},
          {"average_pooling_without_padding_in_count", nn::make<nn::SpatialAveragePooling>(excludePad), x},
          {"adaptive_average_pooling_to_one", nn::make<nn::SpatialAdaptiveAveragePooling>(1, 1), x},
          {"adaptive_average_pooling_dividing", nn::make<nn::SpatialAdaptiveAveragePooling>(3, 5), normal({2, 10, 6})},
          {"max", nn::make<nn::Max>(1), x},
          {"sum", nn::make<nn::Sum>(2), x},
          {"sum_batch_mode", nn::make<nn::Sum>(0, 2), normal({4, 5})},
          {"sum_kept", nn::make<nn::Sum>(-1, -1, false, false), x},
          {"mean", nn::make<nn::Mean>(1), x},
      },
      dir);
}

TEST_CASE("exportOnnx: containers and tables run in ONNX Runtime as in forward", "[onnx]") {
  TempDir dir;
  const auto x = normal({6}, 5);
  auto twoLinear = [] {
    return container<nn::ConcatTable>({randomised(nn::make<nn::Linear>(6, 4)), randomised(nn::make<nn::Linear>(6, 4))});
  };
  auto positive = [] { return sequential({nn::make<nn::Sigmoid>(), nn::make<nn::AddConstant>(1.f)}); };
  exportAndCompare(
      {
          {"sequential",
           sequential(
               {randomised(nn::make<nn::Linear>(6, 5)), nn::make<nn::Tanh>(), randomised(nn::make<nn::Linear>(5, 2))}),
           x},
          {"concat_table", twoLinear(), x},
          {"cadd_table", sequential({twoLinear(), nn::make<nn::CAddTable>()}), x},
          {"csub_table", sequential({twoLinear(), nn::make<nn::CSubTable>()}), x},
          {"cmul_table", sequential({twoLinear(), nn::make<nn::CMulTable>()}), x},
          {"cdiv_table",
           sequential({container<nn::ConcatTable>({nn::make<nn::Identity>(), positive()}), nn::make<nn::CDivTable>()}),
           x},
          {"join_table", nn::make<nn::JoinTable>(1), normalTable({{2, 3}, {4, 3}})},
          {"join_table_from_end", nn::make<nn::JoinTable>(-1), normalTable({{2, 3}, {2, 2}})},
          {"join_table_samples", nn::make<nn::JoinTable>(0, 2), normalTable({{2, 3}, {4, 3}})},
          {"split_table", nn::make<nn::SplitTable>(1), normal({3, 2})},
          {"split_table_from_end", nn::make<nn::SplitTable>(-1), normal({3, 2})},
          {"split_table_samples", nn::make<nn::SplitTable>(0, 2), normal({3, 2})},
          {"select_table", nn::make<nn::SelectTable>(-1), normalTable({{2}, {3}})},
          {"narrow_table", nn::make<nn::NarrowTable>(1, 2), normalTable({{2}, {3}, {4}})},
          {"flatten_table", nn::make<nn::FlattenTable>(),
           [](int64_t b) {
             return Activity(Table{normal({2}, 1)(b), Table{normal({3}, 2)(b), Table{normal({1}, 3)(b)}}});
           }},
          {"parallel_table",
           container<nn::ParallelTable>({randomised(nn::make<nn::Linear>(2, 3)), nn::make<nn::Tanh>()}),
           normalTable({{2}, {4}})},
          {"concat",
           container<nn::Concat>({randomised(nn::make<nn::Linear>(6, 2)), nn::make<nn::Tanh>()},
                                 std::make_shared<nn::Concat>(1)),
           x},
      },
      dir);
}

TEST_CASE("exportOnnx: LeNet and the residual network run in ONNX Runtime as in forward", "[onnx]") {
  TempDir dir;
  nn::manualSeed(3);
  auto resnet = examples::resnet();
  // Batch statistics that are not the initial ones: a few training forwards.
  for (int i = 0; i < 3; ++i) resnet->forward(normal({1, 28, 28}, 20 + i)(8).tensor());
  exportAndCompare({{"lenet", examples::lenet(), normal({1, 28, 28})}, {"resnet", resnet, normal({1, 28, 28})}}, dir);
}

TEST_CASE("exportOnnx: a DataParallelTable exports its first replica", "[onnx]") {
  TempDir dir;
  auto net = sequential(
      {randomised(nn::make<nn::Linear>(6, 5)), nn::make<nn::ReLU>(), randomised(nn::make<nn::Linear>(5, 3))});
  auto table = std::make_shared<nn::DataParallelTable>(0);
  table->add(net, {nn::Device::cpu(0), nn::Device::cpu(1)});
  exportAndCompare({{"data_parallel_table", table, normal({6})}}, dir);
}

TEST_CASE("exportOnnx: initializers are named as namedParameters and namedBuffers name them", "[onnx]") {
  auto net = sequential({nn::make<nn::SpatialConvolution>(1, 2, 3, 3), nn::make<nn::SpatialBatchNormalization>(2)});
  const std::string bytes = nn::exportOnnxToString(*net, normal({1, 5, 5})(2));
  std::vector<std::string> names;
  for (const auto& p : net->namedParameters()) names.push_back(p.name);
  for (const auto& b : net->namedBuffers()) names.push_back(b.name);
  REQUIRE(names ==
          std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var"});
  // Each name is in the serialised model, followed by its tensor.
  for (const std::string& name : names) {
    INFO(name);
    REQUIRE(bytes.find(name) != std::string::npos);
  }
}

TEST_CASE("exportOnnx: the module goes back to training mode, evaluation mode stays", "[onnx]") {
  auto net = sequential({nn::make<nn::Linear>(4, 4), nn::make<nn::Dropout>(0.5f)});
  REQUIRE(net->isTraining());
  nn::exportOnnxToString(*net, normal({4})(2));
  REQUIRE(net->isTraining());
  REQUIRE(net->children()[1]->isTraining());
  net->evaluate();
  nn::exportOnnxToString(*net, normal({4})(2));
  REQUIRE_FALSE(net->isTraining());
}

namespace {

// A module with no export of its own.
class Doubler : public nn::Module {
 public:
  const Tensor& updateOutput(const Tensor& input) override {
    output.resizeAs_(input).copy_(input).mul_(2.f);
    return output;
  }
  const Tensor& updateGradInput(const Tensor&, const Tensor& gradOutput) override {
    gradInput.resizeAs_(gradOutput).copy_(gradOutput).mul_(2.f);
    return gradInput;
  }
  std::string typeName() const override { return "test.Doubler"; }
};

// "name [sizes]" of each input and output a serialised model declares; a named size by its
// name, an open one as "?".
std::vector<std::string> declaredShapes(const std::string& bytes) {
  onnx::ModelProto model;
  REQUIRE(model.ParseFromString(bytes));
  std::vector<std::string> out;
  for (const auto* infos : {&model.graph().input(), &model.graph().output()})
    for (const onnx::ValueInfoProto& info : *infos) {
      std::string s = info.name() + " [";
      bool first = true;
      for (const auto& dim : info.type().tensor_type().shape().dim()) {
        s += first ? "" : ", ";
        first = false;
        s += dim.has_dim_value() ? std::to_string(dim.dim_value()) : dim.has_dim_param() ? dim.dim_param() : "?";
      }
      out.push_back(s + "]");
    }
  return out;
}

void requireRefused(nn::Module& m, const Activity& input, const std::string& part) {
  TempDir dir;
  const std::string path = dir.file("model.onnx");
  std::ofstream(path) << "kept";
  try {
    nn::exportOnnx(m, input, path);
    FAIL("no error; expected one saying \"" << part << "\"");
  } catch (const nn::Error& e) {
    INFO(e.what());
    REQUIRE(std::string(e.what()).find(part) != std::string::npos);
  }
  REQUIRE(nn::test::fileBytes(path) == "kept");
}

}  // namespace

TEST_CASE("exportOnnx refuses what ONNX cannot express, naming the module and its place", "[onnx]") {
  SECTION("a module without an export, deep in the tree") {
    auto net = sequential(
        {nn::make<nn::Linear>(4, 4), container<nn::ConcatTable>({nn::make<nn::Identity>(), nn::make<Doubler>()})});
    requireRefused(*net, normal({4})(2),
                   "nn.exportOnnx: test.Doubler at 1.1 (in nn.Sequential > nn.ConcatTable): has no ONNX export");
  }
  SECTION("a view that does not keep the batch, with a dynamic batch") {
    auto view = nn::make<nn::View>(std::vector<int64_t>{-1});
    requireRefused(*view, normal({3})(2), "does not keep the input's batch dimension");
  }
  SECTION("a split along the batch") {
    requireRefused(*nn::make<nn::SplitTable>(0), normal({3})(2), "splitting along dimension 0");
  }
  SECTION("adaptive pooling with overlapping windows") {
    requireRefused(*nn::make<nn::SpatialAdaptiveAveragePooling>(3, 3), normal({1, 5, 5})(2), "overlapping windows");
  }
  SECTION("parameters beyond what an ONNX file holds, before the model is built") {
    // 2 GiB of parameters (never touched: the export refuses them before reading any).
    class Huge : public nn::Module {
     public:
      Huge() { registerParameter("weight", &weight, &gradWeight); }
      const Tensor& updateOutput(const Tensor& input) override { return output = input; }
      const Tensor& updateGradInput(const Tensor&, const Tensor& gradOutput) override { return gradInput = gradOutput; }
      std::string typeName() const override { return "test.Huge"; }
      Tensor weight = Tensor::empty({int64_t{1} << 29}), gradWeight;
    };
    Huge huge;
    requireRefused(huge, normal({4})(2),
                   "the model's parameters and buffers take 2147483648 bytes, more than an ONNX "
                   "file without external data can hold");
  }
  SECTION("an empty example") {
    requireRefused(*nn::make<nn::ReLU>(), Activity(Tensor()), "the example input input is empty");
  }
}

TEST_CASE("exportOnnx: without a dynamic batch, a view may take the batch in", "[onnx]") {
  auto view = nn::make<nn::View>(std::vector<int64_t>{-1});
  nn::OnnxOptions options;
  options.dynamicBatch = false;
  const std::string model = nn::exportOnnxToString(*view, normal({3})(2), options);
  // Every size fixed, the inputs' and the outputs'.
  CHECK(declaredShapes(model) == std::vector<std::string>{"input [2, 3]", "output [6]"});
}

TEST_CASE("exportOnnx: the batch dimension is named batchName, where it is the batch", "[onnx]") {
  nn::OnnxOptions options;
  options.batchName = "n";
  auto linear = nn::make<nn::Linear>(3, 4);
  CHECK(declaredShapes(nn::exportOnnxToString(*linear, normal({3})(2), options)) ==
        std::vector<std::string>{"input [n, 3]", "output [n, 4]"});
  // Transpose moves the batch to dimension 1; Concat along dimension 0 makes twice the batch,
  // which no name declares. Both declared [batch, ...] before.
  auto transpose = nn::make<nn::Transpose>(std::initializer_list<std::pair<int, int>>{{0, 1}});
  CHECK(declaredShapes(nn::exportOnnxToString(*transpose, normal({3})(2), options)) ==
        std::vector<std::string>{"input [n, 3]", "output [3, n]"});
  auto concat =
      container<nn::Concat>({nn::make<nn::Identity>(), nn::make<nn::Identity>()}, std::make_shared<nn::Concat>(0));
  CHECK(declaredShapes(nn::exportOnnxToString(*concat, normal({3})(2), options)) ==
        std::vector<std::string>{"input [n, 3]", "output [?, 3]"});
  TempDir dir;
  exportAndCompare({{"transpose_batch", transpose, normal({4})}, {"concat_batch", concat, normal({4})}}, dir);
}

TEST_CASE("exportOnnx: a size equal to the example's batch is not taken for the batch", "[onnx]") {
  // View(2, -1) on a batch of 2 looked as if it kept the batch: it was exported as a Reshape to
  // [0, 6], which ONNX Runtime ran at a batch of 5 to [5, 6] where the module gives [2, 15].
  auto view = sequential({nn::make<nn::Linear>(6, 6), nn::make<nn::View>(std::vector<int64_t>{2, -1})});
  requireRefused(*view, normal({6})(2),
                 "nn.exportOnnx: nn.View at 1 (in nn.Sequential): its export holds for the example's batch only: at a "
                 "batch of 3 the ONNX model gives [3, 6] where the module gives [2, 9]");
  nn::OnnxOptions fixed;
  fixed.dynamicBatch = false;
  CHECK(declaredShapes(nn::exportOnnxToString(*view, normal({6})(2), fixed)) ==
        std::vector<std::string>{"input [2, 6]", "output [2, 6]"});
}

TEST_CASE("exportOnnx: a module of one's own exports with its registered export", "[onnx]") {
  TempDir dir;
  nn::onnx::registerExport("test.Doubler",
                           [](nn::onnx::Exporter& e, nn::Module&, const nn::onnx::Traced& in, const Activity&) {
                             return nn::onnx::Value(e.op("Mul", {in.value.name, e.floatScalar(2.f)}));
                           });
  REQUIRE(nn::onnx::hasExport("test.Doubler"));
  exportAndCompare({{"custom", sequential({nn::make<nn::Linear>(3, 3), nn::make<Doubler>()}), normal({3})}}, dir);
}

TEST_CASE("lenet --export-onnx: ONNX Runtime's test accuracy is the one the example prints", "[onnx]") {
  TempDir dir;
  nn::test::writeSyntheticSplit(dir, "train", 64, 1);
  nn::test::writeSyntheticSplit(dir, "t10k", 40, 2);
  const std::string model = dir.file("lenet.onnx");
  const nn::test::ExampleResult run =
      nn::test::runExample({"--data-dir", dir.path(), "--epochs", "1", "--batch-size", "16", "--export-onnx", model});
  INFO(run.stdoutText << run.stderrText);
  REQUIRE(run.exitStatus == 0);
  REQUIRE(run.stdoutText.find("network exported to " + model) != std::string::npos);
  REQUIRE_NOTHROW(nn::checkOnnxFile(model));
  const size_t at = run.stdoutText.find("test accuracy ");
  REQUIRE(at != std::string::npos);
  const std::string printed = run.stdoutText.substr(at, std::string("test accuracy 0.0000").size());
  const std::string python = nn::test::referencePython();
  if (python.empty()) NN_SKIP("ONNX Runtime is not installed (tools/reference-venv.sh); the export passed the checker");
  const nn::test::ExampleResult served = nn::test::runCommand({python, "tools/onnx-accuracy.py", model, dir.path()});
  INFO(served.stdoutText << served.stderrText);
  REQUIRE(served.exitStatus == 0);
  REQUIRE(served.stdoutText == printed + "\n");
}
