// nn::readTorch7 and nn::loadTorch7: files Lua Torch wrote (python-torchfile's test files), models
// written by tests/fixtures/make_torch7_fixtures.py loaded and run against PyTorch's outputs, and broken
// or hostile files refused with an nn::Error that names the file and the place.
#include "nn/io/Torch7.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "nn/core/Container.h"
#include "nn/io/Serialize.h"
#include "nn/tensor/Error.h"
#include "tests/support/TempDir.h"

using nn::Torch7Object;
using Kind = nn::Torch7Object::Kind;
using nn::test::TempDir;

namespace {

const std::string kData = "tests/fixtures/torch7/";

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A Torch7 file written value by value (File.lua's writeObject), for the files the tests break.
class T7 {
 public:
  T7& i32(int32_t v) { return raw(&v, 4); }
  T7& i64(int64_t v) { return raw(&v, 8); }
  T7& nil() { return i32(0); }
  T7& number(double v) { return i32(1).raw(&v, 8); }
  T7& string(const std::string& s) { return i32(2).text(s); }
  T7& table(int32_t index, int32_t entries) { return i32(3).i32(index).i32(entries); }
  // A Torch object's header: its index, version and class; its data follows.
  T7& object(int32_t index, const std::string& cls) { return i32(4).i32(index).text("V 1").text(cls); }
  // A tensor's header and data up to its storage, which follows.
  T7& tensor(int32_t index, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset = 1,
             const std::string& cls = "torch.FloatTensor") {
    object(index, cls).i32(static_cast<int32_t>(sizes.size()));
    for (int64_t s : sizes) i64(s);
    for (int64_t s : strides) i64(s);
    return i64(offset);
  }
  T7& floats(int32_t index, const std::vector<float>& values) {
    object(index, "torch.FloatStorage").i64(static_cast<int64_t>(values.size()));
    return raw(values.data(), values.size() * 4);
  }
  T7& text(const std::string& s) {
    i32(static_cast<int32_t>(s.size()));
    bytes += s;
    return *this;
  }
  T7& raw(const void* p, size_t n) {
    bytes.append(static_cast<const char*>(p), n);
    return *this;
  }
  std::string bytes;
};

// The message of the nn::Error that `f` throws ("" where it returns).
template <typename F>
std::string errorOf(F f) {
  try {
    f();
  } catch (const nn::Error& e) {
    return e.what();
  }
  return "";
}

std::string loadError(const TempDir& dir, const std::string& bytes) {
  const std::string path = dir.file("model.t7");
  writeBytes(path, bytes);
  return errorOf([&] { nn::loadTorch7(path); });
}

std::string readError(const TempDir& dir, const std::string& bytes) {
  const std::string path = dir.file("value.t7");
  writeBytes(path, bytes);
  return errorOf([&] { nn::readTorch7(path); });
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// nn.Sequential with its `modules` list of `count` entries; they follow as key-value pairs.
T7& sequential(T7& t, int32_t index, int32_t count) {
  t.object(index, "nn.Sequential").table(index + 1, 1).string("modules").table(index + 2, count);
  return t;
}

// A module of no fields of its own ({train = false}) as an item of a list.
T7& leaf(T7& t, double key, int32_t index, const std::string& cls) {
  t.number(key).object(index, cls).table(index + 1, 1).string("train");
  return t.i32(5).i32(0);
}

// Loads NAME.t7, checks its tree, and its output on NAME.io.safetensors's input against PyTorch's.
nn::ModulePtr checkModel(const std::string& name, const std::string& tree) {
  INFO(name);
  const nn::ModulePtr model = nn::loadTorch7(kData + name + ".t7");
  CHECK(model->toString() == tree);
  // The files hold every module in evaluation mode (train = false).
  for (const nn::ModulePtr& m : model->listModules()) CHECK_FALSE(m->isTraining());
  nn::Tensor input, expected;
  for (const nn::NamedTensor& t : nn::readSafetensors(kData + name + ".io.safetensors").tensors)
    (t.name == "input" ? input : expected) = t.value;
  const nn::Tensor output = model->forward(input);
  REQUIRE(output.sizes() == expected.sizes());
  const std::vector<float> got = output.toVector(), want = expected.toVector();
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::fabs(got[i] - want[i]) <= 1e-5f);
  }
  return model;
}

}  // namespace

TEST_CASE("Lua Torch's own files read as python-torchfile reads them", "[torch7]") {
  const Torch7Object doubles = nn::readTorch7(kData + "torchfile-doubletensor.t7");
  CHECK(doubles.kind == Kind::Tensor);
  CHECK(doubles.className == "torch.DoubleTensor");
  CHECK(doubles.tensor.sizes() == std::vector<int64_t>{2, 3});
  CHECK(doubles.tensor.toVector() == std::vector<float>{1.f, 2.f, 3.f, 4.f, 5.f, 6.9f});

  // tests.py: the sum of the floats is 12.97241666913.
  const Torch7Object floats = nn::readTorch7(kData + "torchfile-floattensor.t7");
  CHECK(floats.className == "torch.FloatTensor");
  double sum = 0;
  for (float v : floats.tensor.toVector()) sum += v;
  CHECK(std::fabs(sum - 12.97241666913) < 1e-5);

  const Torch7Object hello = nn::readTorch7(kData + "torchfile-hello-123.t7");
  REQUIRE(hello.kind == Kind::Table);
  REQUIRE(hello.field("hello"));
  CHECK(hello.field("hello")->number == 123);

  const Torch7Object list = nn::readTorch7(kData + "torchfile-list-table.t7");
  REQUIRE(list.table().entries.size() == 4);
  CHECK(list.table().find(1.0)->string == "hello");
  CHECK(list.table().find(3.0)->string == "third item");
  CHECK(list.table().find(4.0)->number == 123);

  const Torch7Object blah = nn::readTorch7(kData + "torchfile-custom-class.t7");
  CHECK(blah.kind == Kind::Object);
  CHECK(blah.className == "Blah");
  CHECK(blah.table().entries.empty());

  // tds's containers, in their own format.
  const Torch7Object hash = nn::readTorch7(kData + "torchfile-tds-hash.t7");
  CHECK(hash.className == "tds.Hash");
  CHECK(hash.table().entries.size() == 3);
  CHECK(hash.table().find(10.0)->number == 11);
  const Torch7Object vec = nn::readTorch7(kData + "torchfile-tds-vec.t7");
  CHECK(vec.table().find(1.0)->number == 123);
  CHECK(vec.table().find(2.0)->number == 456);

  // nngraph's module, read as data; loadTorch7 maps no nngraph class.
  const Torch7Object graph = nn::readTorch7(kData + "torchfile-gmodule-with-linear-identity.t7");
  CHECK(graph.className == "nn.gModule");
  CHECK(nn::readTorch7(kData + "torchfile-nngraph-node.t7").className == "nngraph.Node");
  CHECK(errorOf([] { nn::loadTorch7(kData + "torchfile-gmodule-with-linear-identity.t7"); }) ==
        kData + "torchfile-gmodule-with-linear-identity.t7: class nn.gModule is not supported");
}

TEST_CASE("a table or an object that contains itself is read, the inner place a reference", "[torch7]") {
  // torch.class("A") whose field a is the object itself.
  const Torch7Object a = nn::readTorch7(kData + "torchfile-recursive-class.t7");
  REQUIRE(a.field("a"));
  CHECK(a.field("a")->identity() == a.identity());
  CHECK(a.field("a")->field("a")->identity() == a.identity());
  // A table whose one key and value are the table itself.
  const Torch7Object t = nn::readTorch7(kData + "torchfile-recursive-kv-table.t7");
  REQUIRE(t.table().entries.size() == 1);
  CHECK(t.table().entries[0].first.identity() == t.identity());
  CHECK(t.table().entries[0].second.identity() == t.identity());
  // A part kept without the whole fails with a message, not a dangling reference.
  Torch7Object inner;
  {
    const Torch7Object whole = nn::readTorch7(kData + "torchfile-recursive-class.t7");
    inner = *whole.field("a");
  }
  CHECK(contains(errorOf([&] { inner.table(); }), "refers back to a table that contains it"));
}

TEST_CASE("Lua functions are refused, never run", "[torch7]") {
  for (const char* name : {"torchfile-function.t7", "torchfile-function-upvals.t7"}) {
    INFO(name);
    const std::string message = errorOf([&] { nn::readTorch7(kData + name); });
    CHECK(message == kData + name + ": byte 0: a Lua function (type 8): functions are code, and this reader reads data only "
                                    "(save the model without them)");
    CHECK(errorOf([&] { nn::loadTorch7(kData + name); }) == message);
  }
}

TEST_CASE("a convolutional network loads and computes PyTorch's output", "[torch7]") {
  // SpatialConvolutionMM's 2-D weight, running_var and version 1's running_std, Double weights,
  // Linear's weight and bias at offsets of one storage; View(24) infers the batch.
  checkModel("convnet",
             "nn.Sequential {\n"
             "  [input -> (1) -> (2) -> (3) -> (4) -> (5) -> (6) -> (7) -> (8) -> (9) -> (10) -> (11) -> output]\n"
             "  (1): nn.SpatialConvolution(1 -> 4, 3x3, 1,1, 1,1)\n"
             "  (2): nn.SpatialBatchNormalization(4)\n"
             "  (3): nn.ReLU(true)\n"
             "  (4): nn.SpatialMaxPooling(2x2, 2,2)\n"
             "  (5): nn.SpatialConvolution(4 -> 6, 3x3)\n"
             "  (6): nn.SpatialBatchNormalization(6, eps=0.001)\n"
             "  (7): nn.ReLU\n"
             "  (8): nn.Dropout(0.25)\n"
             "  (9): nn.View(-1, 24)\n"
             "  (10): nn.Linear(24 -> 5)\n"
             "  (11): nn.LogSoftMax\n"
             "}");
}

TEST_CASE("cudnn's grouped and depthwise convolutions, one without a bias, load and compute PyTorch's output",
          "[torch7]") {
  const nn::ModulePtr model = checkModel("grouped",
                                         "nn.Sequential {\n"
                                         "  [input -> (1) -> (2) -> (3) -> output]\n"
                                         "  (1): nn.SpatialConvolution(4 -> 4, 3x3, 1,1, 1,1, groups=2, no bias)\n"
                                         "  (2): nn.ReLU(true)\n"
                                         "  (3): nn.SpatialConvolution(4 -> 4, 3x3, groups=4)\n"
                                         "}");
  // noBias() leaves no parameter: the first convolution's weight alone.
  std::vector<std::string> names;
  for (const nn::NamedTensor& t : model->stateDict()) names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"0.weight", "2.weight", "2.bias"});
}

TEST_CASE("cudnn's modules and a residual block load and compute PyTorch's output", "[torch7]") {
  checkModel("residual",
             "nn.Sequential {\n"
             "  [input -> (1) -> (2) -> (3) -> (4) -> (5) -> (6) -> (7) -> (8) -> (9) -> (10) -> output]\n"
             "  (1): nn.SpatialConvolution(3 -> 4, 3x3, 1,1, 1,1)\n"
             "  (2): nn.SpatialBatchNormalization(4)\n"
             "  (3): nn.ReLU(true)\n"
             "  (4): nn.ConcatTable {\n"
             "    input\n"
             "      |`-> (1): nn.Sequential {\n"
             "      |      [input -> (1) -> (2) -> (3) -> (4) -> (5) -> output]\n"
             "      |      (1): nn.SpatialConvolution(4 -> 4, 3x3, 1,1, 1,1)\n"
             "      |      (2): nn.SpatialBatchNormalization(4)\n"
             "      |      (3): nn.ReLU(true)\n"
             "      |      (4): nn.SpatialConvolution(4 -> 4, 3x3, 1,1, 1,1)\n"
             "      |      (5): nn.SpatialBatchNormalization(4)\n"
             "      |    }\n"
             "       `-> (2): nn.Identity\n"
             "       ... -> output\n"
             "  }\n"
             "  (5): nn.CAddTable(true)\n"
             "  (6): nn.ReLU(true)\n"
             "  (7): nn.SpatialAveragePooling(4x4, 1,1)\n"
             "  (8): nn.View(-1, 4)\n"
             "  (9): nn.Linear(4 -> 3)\n"
             "  (10): nn.SoftMax\n"
             "}");
}

TEST_CASE("a module in two places stays one module; a shared tensor's values reach both", "[torch7]") {
  const nn::ModulePtr model = checkModel("shared",
                                         "nn.Sequential {\n"
                                         "  [input -> (1) -> (2) -> (3) -> (4) -> (5) -> (6) -> (7) -> output]\n"
                                         "  (1): nn.Reshape(4)\n"
                                         "  (2): nn.Linear(4 -> 4)\n"
                                         "  (3): nn.Tanh\n"
                                         "  (4): nn.Linear(4 -> 4)\n"
                                         "  (5): nn.Tanh\n"
                                         "  (6): nn.Linear(4 -> 4)\n"
                                         "  (7): nn.Sigmoid\n"
                                         "}");
  const auto& children = model->children();
  CHECK(children[1] == children[3]);
  CHECK(children[1] != children[5]);
  // The file's second Linear refers to the first's weight tensor: the same values, copied.
  CHECK(children[5]->stateDict()[0].value.toVector() == children[1]->stateDict()[0].value.toVector());
  // The reader keeps the reference: one tensor.
  const Torch7Object file = nn::readTorch7(kData + "shared.t7");
  const nn::Torch7Table& modules = file.field("modules")->table();
  CHECK(modules.find(2.0)->identity() == modules.find(4.0)->identity());
  CHECK(modules.find(2.0)->field("weight")->tensor.is(modules.find(6.0)->field("weight")->tensor));
}

TEST_CASE("a DataParallelTable loads as its first replica", "[torch7]") {
  // Version 3's own format, and its impl field that refers back to the table.
  checkModel("data-parallel",
             "nn.Sequential {\n"
             "  [input -> (1) -> (2) -> output]\n"
             "  (1): nn.Linear(5 -> 3)\n"
             "  (2): nn.ReLU\n"
             "}");
}

TEST_CASE("an unknown class is refused with its place in the tree", "[torch7]") {
  TempDir dir;
  T7 t;
  sequential(t, 1, 3);
  leaf(t, 1, 4, "nn.Identity");
  leaf(t, 2, 6, "nn.Tanh");
  t.number(3);
  sequential(t, 8, 1);
  leaf(t, 1, 11, "nn.Foo");
  CHECK(loadError(dir, t.bytes) == dir.file("model.t7") + ": modules[3].modules[1]: class nn.Foo is not supported");
  // A table where a module was expected.
  T7 table;
  table.table(1, 0);
  CHECK(loadError(dir, table.bytes) ==
        dir.file("model.t7") + ": a table, expected a module (a Torch object such as nn.Sequential)");
}

TEST_CASE("a file cut at any byte is an nn::Error naming the file and the byte", "[torch7]") {
  TempDir dir;
  for (const char* name : {"shared.t7", "data-parallel.t7"}) {
    const std::string whole = readBytes(kData + name);
    REQUIRE(whole.size() > 1000);
    for (size_t n = 0; n < whole.size(); ++n) {
      INFO(name << " cut at " << n);
      // Where the cut leaves fewer bytes than a count declares, the count is refused first.
      const std::string message = readError(dir, whole.substr(0, n));
      CHECK(message.rfind(dir.file("value.t7") + ": byte ", 0) == 0);
      CHECK((contains(message, "the file ends") || contains(message, "bytes are left")));
    }
  }
}

TEST_CASE("huge counts, sizes and offsets are refused before anything is allocated", "[torch7]") {
  TempDir dir;
  // A storage of 2^62 floats in a file of 60 bytes.
  T7 storage;
  storage.object(1, "torch.FloatStorage").i64(int64_t{1} << 62);
  CHECK(contains(readError(dir, storage.bytes), "torch.FloatStorage of 4611686018427387904 elements of 4 bytes"));
  // A table of 2^31 - 1 entries.
  T7 table;
  table.table(1, 2147483647);
  CHECK(contains(readError(dir, table.bytes), "a table of 2147483647 entries"));
  // A string of 2^31 - 1 bytes, and one of negative length.
  T7 text;
  text.i32(2).i32(2147483647);
  CHECK(contains(readError(dir, text.bytes), "the file ends (0 bytes left) where a string (2147483647 bytes)"));
  T7 negative;
  negative.i32(2).i32(-5);
  CHECK(contains(readError(dir, negative.bytes), "byte 4: a string has a negative length, -5"));
  // Tensors: too many dimensions, sizes beyond int64, an offset outside the storage, a view
  // reaching past its end, a storage of another type.
  T7 dims;
  dims.object(1, "torch.FloatTensor").i32(65);
  CHECK(contains(readError(dir, dims.bytes), "torch.FloatTensor of 65 dimensions (expected 0 to 64)"));
  T7 sizes;
  sizes.tensor(1, {int64_t{1} << 40, int64_t{1} << 40}, {0, 0}).floats(2, {1.f});
  CHECK(contains(readError(dir, sizes.bytes), "torch.FloatTensor of sizes [1099511627776, 1099511627776]"));
  T7 offset;
  offset.tensor(1, {2}, {1}, 4).floats(2, {1.f, 2.f, 3.f});
  CHECK(contains(readError(dir, offset.bytes),
                 "torch.FloatTensor of sizes [2], strides [1] and offset 4 reaches outside its storage of 3 elements"));
  T7 zeroOffset;
  zeroOffset.tensor(1, {1}, {1}, 0).floats(2, {1.f});
  CHECK(contains(readError(dir, zeroOffset.bytes), "offset 0 reaches outside"));
  T7 wrongStorage;
  const double one = 1;
  wrongStorage.tensor(1, {1}, {1}).object(2, "torch.DoubleStorage").i64(1).raw(&one, 8);
  CHECK(contains(readError(dir, wrongStorage.bytes),
                 "the storage of torch.FloatTensor is a torch.DoubleStorage, expected torch.FloatStorage"));
  // A view of stride 0 is read (Torch writes expanded tensors so), but a module built from
  // one as large as above is refused by the storage it would need.
  T7 expanded;
  expanded.tensor(1, {1000, 1000}, {0, 0}).floats(2, {0.5f});
  const Torch7Object view = [&] {
    writeBytes(dir.file("view.t7"), expanded.bytes);
    return nn::readTorch7(dir.file("view.t7"));
  }();
  CHECK(view.tensor.sizes() == std::vector<int64_t>{1000, 1000});
  CHECK(view.tensor.at({999, 999}) == 0.5f);
  T7 linear;
  linear.object(1, "nn.Linear").table(2, 1).string("weight").tensor(3, {1000, 1000}, {0, 0}).floats(4, {0.5f});
  CHECK(contains(loadError(dir, linear.bytes), "model.t7: cannot build nn.Linear: "));
}

TEST_CASE("negative strides, deep nesting and self-references are refused", "[torch7]") {
  TempDir dir;
  T7 strides;
  strides.tensor(1, {2}, {-1}, 2).floats(2, {1.f, 2.f});
  CHECK(contains(readError(dir, strides.bytes),
                 "byte 48: torch.FloatTensor of strides [-1] (expected strides of at least 0: a tensor of negative "
                 "strides is not read)"));
  // 10000 tables, each the value of the one before: refused at level 200, long before the stack.
  T7 deep;
  for (int i = 1; i <= 10000; ++i) deep.table(i, 1).number(1);
  CHECK(contains(readError(dir, deep.bytes), "values nested more than 200 levels deep"));
  // A tensor whose storage is the tensor itself.
  T7 self;
  self.tensor(1, {1}, {1}).i32(4).i32(1);
  CHECK(contains(readError(dir, self.bytes), "value #1 (torch.FloatTensor) refers to itself"));
  // A Sequential that contains itself.
  T7 loop;
  sequential(loop, 1, 1);
  loop.number(1).i32(4).i32(1);
  CHECK(contains(loadError(dir, loop.bytes), "modules[1]: nn.Sequential contains itself"));
  // Sequentials each holding the one below in two places, 40 levels: 2^40 places from 2 KB,
  // refused before making a container walks them.
  T7 doubling;
  int32_t next = 1;
  std::function<int32_t(int)> level = [&](int n) {
    const int32_t index = next;
    if (n == 0) {
      next += 2;
      doubling.object(index, "nn.Identity").table(index + 1, 0);
      return index;
    }
    next += 3;
    doubling.object(index, "nn.Sequential").table(index + 1, 1).string("modules").table(index + 2, 2).number(1);
    const int32_t below = level(n - 1);
    doubling.number(2).i32(4).i32(below);
    return index;
  };
  level(40);
  CHECK(contains(loadError(dir, doubling.bytes), "the module tree holds more than 1048576 modules counted at each"));
  // A number where a size was expected, and a size that is not an integer.
  T7 conv;
  conv.object(1, "nn.SpatialConvolution").table(2, 1).string("nInputPlane").number(1.5);
  CHECK(loadError(dir, conv.bytes) == dir.file("model.t7") + ": field nInputPlane is 1.500000, expected an integer");
  // An unknown type code and a boolean that is neither 0 nor 1.
  T7 code;
  code.i32(9);
  CHECK(readError(dir, code.bytes) == dir.file("value.t7") + ": byte 0: unknown value type 9 (expected 0 to 8)");
  T7 boolean;
  boolean.i32(5).i32(2);
  CHECK(readError(dir, boolean.bytes) == dir.file("value.t7") + ": byte 4: a boolean is 2, expected 0 or 1");
}
