// Module trees from bytes. The bytes, read in order (0 once they run out):
//   input:  rank (0 to 4), a size (0 to 7) per dimension, table items (0: a tensor), value kind
//           (small integers, sines, or NaN, infinities and -0), training flag;
//   module: type (an index into prototypes()), then per config field a byte below 0x40 that
//           keeps the prototype's value, or one from 0x40 that gives a new value (see mutate),
//           then for a container its number of children (0 to 3) and each child.
#include "tests/fuzz/ModuleTrees.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>

#include "nn/nn.h"
#include "tests/fuzz/Bytes.h"

namespace nn::fuzz {

namespace {

using Json = nlohmann::ordered_json;

// Deeper trees find nothing that three levels do not, and cost more per input.
constexpr int kMaxDepth = 3;
constexpr int64_t kPassBytes = int64_t{64} << 20;

// Values at and near the ends of what each layer of arithmetic takes: int64 (twice as likely),
// kMaxElements, int and uint32, the scale limit of 2^16. 32 of them: integer() takes each alike.
constexpr int64_t kIntegers[] = {
    INT64_MAX,
    INT64_MAX,
    INT64_MAX - 1,
    INT64_MIN,
    INT64_MIN,
    INT64_MIN + 1,
    INT64_MAX / 2,
    INT64_MAX / 2 + 1,
    INT64_MIN / 2,
    int64_t{1} << 62,
    -(int64_t{1} << 62),
    3 * (int64_t{1} << 61),
    kMaxElements + 1,
    kMaxElements,
    kMaxElements - 1,
    -kMaxElements,
    -kMaxElements - 1,
    int64_t{1} << 40,
    -(int64_t{1} << 40),
    int64_t{1} << 32,
    (int64_t{1} << 32) + 1,
    INT32_MAX,
    int64_t{INT32_MAX} + 1,
    INT32_MIN,
    int64_t{INT32_MIN} - 1,
    65535,
    65536,
    65537,
    -65536,
    int64_t{1} << 20,
    1000003,
    -2,
};
static_assert(std::size(kIntegers) == 32, "integer() maps 128 bytes onto them, 4 each");
constexpr double kNumbers[] = {
    0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-30, 1e30, -1e30, 1e300, -1e300, 3.4028234663852886e38, 3.5e38, 1e-45, 1e-320};

// An integer from one byte: below 0x80 a small one (-16 to 47), else one of the ends above.
int64_t integer(uint8_t b) {
  if (b < 0x80) return (b & 0x3f) - 16;
  return kIntegers[(b - 0x80) % std::size(kIntegers)];
}

// A config value from one byte (and a list's elements from one each), so that one changed byte
// gives a field an extreme: below 0x40 the prototype's value, else a flipped flag, an integer as
// integer() gives it, one of float's ends or small numbers, an empty or odd text, a list.
Json mutate(Bytes& in, const Config::Value& value) {
  const uint8_t b = in.next();
  if (b < 0x40) return std::visit([](const auto& v) { return Json(v); }, value);
  if (const bool* flag = std::get_if<bool>(&value)) return !*flag;
  if (std::get_if<int64_t>(&value)) return integer(b);
  if (std::get_if<double>(&value)) return kNumbers[b % std::size(kNumbers)];
  if (std::get_if<std::string>(&value)) return b % 2 ? "" : "cpu:9999";
  std::vector<int64_t> list(b % 5);
  for (int64_t& v : list) v = integer(in.next());
  return list;
}

bool isContainer(const Module& m) { return dynamic_cast<const Container*>(&m) != nullptr; }

Json tree(Bytes& in, int depth, bool training) {
  const std::vector<Prototype>& all = prototypes();
  const Prototype& p = all[in.next() % all.size()];
  const Config original = p.module->config();
  Json config = Json::object();
  for (const auto& [name, value] : original.values()) config[name] = mutate(in, value);
  Json children = Json::array();
  if (isContainer(*p.module)) {
    const int count = depth < kMaxDepth ? in.next() % 4 : 0;
    for (int i = 0; i < count; ++i) children.push_back(tree(in, depth + 1, training));
  }
  Json node = Json::object();
  node["type"] = p.module->typeName();
  node["config"] = config;
  node["training"] = training;
  node["children"] = children;
  return node;
}

Tensor inputTensor(const std::vector<int64_t>& sizes, int kind) {
  Tensor t = Tensor::empty(sizes);
  constexpr float kSpecial[] = {std::numeric_limits<float>::quiet_NaN(),
                                std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity(),
                                -0.f,
                                1e30f,
                                3.f};
  float* d = t.data();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (kind == 0) d[i] = static_cast<float>(i % 5);  // LookupTable's indices among them
    if (kind == 1) d[i] = std::sin(static_cast<float>(i));
    if (kind == 2) d[i] = kSpecial[i % 6];
  }
  return t;
}

// gradOutput for `output`: ones, in its shape.
Activity onesLike(const Activity& output) {
  if (output.isTensor()) return Tensor::full(output.tensor().sizes(), 1.f);
  Table table;
  for (size_t i = 0; i < output.size(); ++i) table.push_back(onesLike(output[i]));
  return table;
}

Prototype of(ModulePtr module, std::vector<int64_t> inputSizes, int tableItems = 0) {
  return Prototype{std::move(module), std::move(inputSizes), tableItems};
}

template <typename T>
ModulePtr withIdentities(std::shared_ptr<T> container, int n) {
  for (int i = 0; i < n; ++i) container->add(std::make_shared<Identity>());
  return container;
}

std::vector<Prototype> makePrototypes() {
  const std::vector<int64_t> matrix{2, 3}, images{2, 3, 4, 4}, vector{2};
  return {
      of(std::make_shared<Add>(3), matrix),
      of(std::make_shared<AddConstant>(1.5f), matrix),
      of(std::make_shared<BatchNormalization>(3), matrix),
      of(std::make_shared<CAddTable>(), matrix, 2),
      of(std::make_shared<CDivTable>(), matrix, 2),
      of(std::make_shared<CMul>(3), matrix),
      of(std::make_shared<CMulTable>(), matrix, 2),
      of(std::make_shared<CSubTable>(), matrix, 2),
      of(withIdentities(std::make_shared<Concat>(1), 2), matrix),
      of(withIdentities(std::make_shared<ConcatTable>(), 2), matrix),
      of(std::make_shared<Dropout>(0.5f), matrix),
      of(std::make_shared<ELU>(), matrix),
      of(std::make_shared<FlattenTable>(), vector, 3),
      of(std::make_shared<HardTanh>(), matrix),
      of(std::make_shared<Identity>(), matrix),
      of(std::make_shared<JoinTable>(1), matrix, 2),
      of(std::make_shared<LeakyReLU>(), matrix),
      of(std::make_shared<Linear>(3, 2), matrix),
      of(std::make_shared<LogSoftMax>(), matrix),
      of(std::make_shared<LookupTable>(5, 3), matrix),
      of(std::make_shared<Max>(1), matrix),
      of(std::make_shared<Mean>(1), matrix),
      of(std::make_shared<Mul>(), matrix),
      of(std::make_shared<MulConstant>(2.f), matrix),
      of(std::make_shared<Narrow>(3, 1, 2), images),
      of(std::make_shared<NarrowTable>(1, 2), vector, 3),
      of(std::make_shared<PReLU>(3), images),
      of(withIdentities(std::make_shared<ParallelTable>(), 2), matrix, 2),
      of(std::make_shared<ReLU>(), matrix),
      of(std::make_shared<ReLU6>(), matrix),
      of(std::make_shared<Reshape>(std::vector<int64_t>{3, 2}), matrix),
      of(std::make_shared<Select>(1, 2), images),
      of(std::make_shared<SelectTable>(1), matrix, 2),
      of(withIdentities(std::make_shared<Sequential>(), 1), matrix),
      of(std::make_shared<Sigmoid>(), matrix),
      of(std::make_shared<SoftMax>(), matrix),
      of(std::make_shared<SoftPlus>(), matrix),
      of(std::make_shared<SpatialAdaptiveAveragePooling>(3, 2), images),
      of(std::make_shared<SpatialAveragePooling>(3, 3, 1, 1, 1, 1), images),
      of(std::make_shared<SpatialBatchNormalization>(3), images),
      of(std::make_shared<SpatialConvolution>(3, 2, 3, 3, 1, 1, 1, 1), images),
      of(std::make_shared<SpatialDilatedConvolution>(3, 2, 3, 3, 1, 1, 2, 2, 2, 2), images),
      of(std::make_shared<SpatialDropout>(0.5f), images),
      of(std::make_shared<SpatialFullConvolution>(3, 2, 3, 3, 2, 2, 1, 1, 1, 1), images),
      of(std::make_shared<SpatialMaxPooling>(2, 2, 2, 2), images),
      of(std::make_shared<SpatialUpSamplingNearest>(2), images),
      of(std::make_shared<SpatialZeroPadding>(1, 2, -1, 0), images),
      of(std::make_shared<SplitTable>(1), matrix),
      of(std::make_shared<Sum>(1), matrix),
      of(std::make_shared<Tanh>(), matrix),
      of(std::make_shared<Threshold>(0.1f, 0.f), matrix),
      of(std::make_shared<Transpose>(std::initializer_list<std::pair<int, int>>{{0, 1}}), matrix),
      of(std::make_shared<View>(std::vector<int64_t>{3, -1}), matrix),
      // Added later, after the others, so that the inputs found before (their bytes pick a
      // type by its place) still pick the types they picked.
      of(std::make_shared<LogSigmoid>(), matrix),
      of(std::make_shared<SoftSign>(), matrix),
      of(std::make_shared<SiLU>(), matrix),
      of(std::make_shared<GELU>(), matrix),
      of(std::make_shared<LayerNorm>(std::vector<int64_t>{3}), matrix),
      of(std::make_shared<GroupNorm>(1, 3), images),
  };
}

// A node of randomModuleTree: a random type, each field kept or set from a random byte that
// mutate() reads as a new value, a container's children one level down.
void randomNode(std::minstd_rand& random, int depth, std::string& bytes) {
  const size_t index = random() % prototypes().size();
  const Prototype& p = prototypes()[index];
  bytes += static_cast<char>(index);
  for (size_t i = 0; i < p.module->config().values().size(); ++i)
    bytes += static_cast<char>(random() % 2 ? 0 : 0x40 + random() % 0xc0);
  if (!isContainer(*p.module)) return;
  const int children = depth < 1 ? static_cast<int>(random() % 3) : 0;
  bytes += static_cast<char>(children);
  for (int i = 0; i < children; ++i) randomNode(random, depth + 1, bytes);
}

}  // namespace

const std::vector<Prototype>& prototypes() {
  static const std::vector<Prototype> all = makePrototypes();
  return all;
}

int runModuleTree(const uint8_t* data, size_t size, std::string* refusal) {
  Bytes in(data, size);
  std::vector<int64_t> sizes(in.next() % 5);
  for (int64_t& s : sizes) s = in.next() % 8;
  const int tableItems = in.next() % 4, kind = in.next() % 3;
  const bool training = in.next() % 2 == 1;
  const std::string description = tree(in, 0, training).dump();

  ModulePtr module;
  try {
    // As nn::load builds a file's tree with no tensors: 1 MB for the parameters of them all.
    module = buildModuleTree(description, "fuzz", 0);
  } catch (const Error& e) {
    if (refusal) *refusal = e.what();
    return 0;
  }
  // What was built saves and loads again: a configuration passes its constructor's checks
  // whether it comes from code or from a file.
  try {
    buildModuleTree(describeModuleTree(*module), "fuzz (saved again)", 0);
  } catch (const Error& e) {
    throw std::logic_error(std::string("a module tree that loaded does not load again: ") + e.what());
  }

  // Extreme sizes within the checks ask for outputs of gigabytes: refused here before a kernel
  // spends minutes filling them.
  StorageLimit limit(kPassBytes, "a fuzz run's forward and backward passes");
  try {
    Activity input = inputTensor(sizes, kind);
    if (tableItems > 0) {
      Table items;
      for (int i = 0; i < tableItems; ++i) items.push_back(inputTensor(sizes, kind));
      input = items;
    }
    const Activity gradOutput = onesLike(module->forward(input));
    module->backward(input, gradOutput);
    module->forward(input);
  } catch (const Error& e) {
    if (refusal) *refusal = e.what();
    return 1;
  }
  return 2;
}

std::string moduleTreeSeed(size_t index) {
  const Prototype& p = prototypes().at(index);
  std::string bytes;
  bytes += static_cast<char>(p.inputSizes.size());
  for (int64_t s : p.inputSizes) bytes += static_cast<char>(s);
  bytes += static_cast<char>(p.tableItems);
  bytes += '\0';  // small integers
  bytes += '\1';  // training
  bytes += static_cast<char>(index);
  bytes += std::string(p.module->config().values().size(), '\0');  // every field kept
  const std::vector<ModulePtr>& children = p.module->children();
  if (!isContainer(*p.module)) return bytes;
  bytes += static_cast<char>(children.size());
  size_t identity = 0;
  while (prototypes()[identity].module->typeName() != "nn.Identity") ++identity;
  for (size_t i = 0; i < children.size(); ++i) bytes += static_cast<char>(identity);
  return bytes;
}

std::string randomModuleTree(uint32_t seed) {
  std::minstd_rand random(seed);
  std::string bytes;
  const size_t rank = 1 + random() % 4;
  bytes += static_cast<char>(rank);
  for (size_t i = 0; i < rank; ++i) bytes += static_cast<char>(1 + random() % 7);
  bytes += static_cast<char>(random() % 4 == 0 ? 1 + random() % 3 : 0);  // a table now and then
  bytes += static_cast<char>(random() % 3);
  bytes += static_cast<char>(random() % 2);
  randomNode(random, 0, bytes);
  return bytes;
}

}  // namespace nn::fuzz
