// Checkpoints from elsewhere: safetensors files of every dtype PyTorch writes, read as float32,
// and nn::loadStateInto's options (non-strict loading with its report, renaming, filtering) and
// PyTorch's BatchNorm batch count. tests/fixtures/torch-*.safetensors were written by PyTorch's own
// writer (tests/fixtures/make_safetensors_fixtures.py); the values below come from the formats' bits.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "nn/io/Serialize.h"
#include "nn/math/Half.h"
#include "nn/modules/Linear.h"
#include "nn/modules/ReLU.h"
#include "nn/modules/Sequential.h"
#include "nn/modules/SpatialBatchNormalization.h"
#include "nn/modules/SpatialConvolution.h"
#include "nn/modules/View.h"
#include "tests/support/TempDir.h"

using nn::Tensor;
using nn::test::TempDir;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::map<std::string, std::vector<float>> valuesByName(const nn::SafetensorsContents& contents) {
  std::map<std::string, std::vector<float>> values;
  for (const nn::NamedTensor& t : contents.tensors) values[t.name] = t.value.toVector();
  return values;
}

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A safetensors file of one header text and data section.
std::string rawFile(const std::string& header, const std::string& data) {
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i) file[static_cast<size_t>(i)] = static_cast<char>(uint64_t{header.size()} >> (8 * i));
  return file + header + data;
}

// The same bits, NaN equal to itself and -0 not to +0.
bool sameBits(float a, float b) { return nn::math::bitsOfFloat(a) == nn::math::bitsOfFloat(b); }

// Sequential(Linear(3, 4), ReLU, Linear(4, classes)) with values it would not draw itself.
nn::ModulePtr mlp(int64_t classes, float fill) {
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Linear>(3, 4));
  net->add(std::make_shared<nn::ReLU>());
  net->add(std::make_shared<nn::Linear>(4, classes));
  for (nn::NamedTensor& t : net->stateDict()) t.value.fill_(fill);
  return net;
}

}  // namespace

TEST_CASE("the 16-bit formats widen exactly and bfloat16 rounds to nearest, ties to even", "[Serialize]") {
  using nn::math::bfloat16ToFloat;
  using nn::math::floatFromBits;
  using nn::math::floatToBfloat16;
  using nn::math::halfToFloat;
  CHECK(halfToFloat(0x3c00) == 1.f);
  CHECK(halfToFloat(0xc000) == -2.f);
  CHECK(halfToFloat(0x7bff) == 65504.f);            // the largest finite half
  CHECK(halfToFloat(0x0001) == std::ldexp(1.f, -24));  // the smallest subnormal
  CHECK(halfToFloat(0x03ff) == std::ldexp(1023.f, -24));
  CHECK(halfToFloat(0x0400) == std::ldexp(1.f, -14));  // the smallest normal
  CHECK(halfToFloat(0x3555) == std::ldexp(1365.f, -12));  // 0x155 | 0x400 = 1365, times 2^(13 - 15 - 10)
  CHECK(halfToFloat(0xfc00) == -kInf);
  CHECK(std::isnan(halfToFloat(0x7e00)));
  CHECK(sameBits(halfToFloat(0x8000), -0.f));
  CHECK(sameBits(halfToFloat(0x8001), -std::ldexp(1.f, -24)));

  CHECK(bfloat16ToFloat(0x3f80) == 1.f);
  CHECK(bfloat16ToFloat(0xc0a0) == -5.f);
  CHECK(sameBits(bfloat16ToFloat(0x0001), floatFromBits(0x00010000)));
  // 1 + 2^-8 lies halfway between bfloat16's 1 and 1 + 2^-7: ties go to the even 1; a bit more
  // goes up; 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6: up, to the even.
  CHECK(floatToBfloat16(1.f + std::ldexp(1.f, -8)) == 0x3f80);
  CHECK(floatToBfloat16(1.f + std::ldexp(1.f, -8) + std::ldexp(1.f, -20)) == 0x3f81);
  CHECK(floatToBfloat16(1.f + 3 * std::ldexp(1.f, -8)) == 0x3f82);
  CHECK(floatToBfloat16(-2.5f) == 0xc020);
  CHECK(floatToBfloat16(std::numeric_limits<float>::max()) == 0x7f80);  // rounds up to infinity
  CHECK(floatToBfloat16(kInf) == 0x7f80);
  const uint16_t nan = floatToBfloat16(floatFromBits(0x7f800001));  // a NaN whose high half is infinity's
  CHECK((nan & 0x7f80) == 0x7f80);
  CHECK((nan & 0x007f) != 0);
}

TEST_CASE("a file of every dtype PyTorch writes reads as float32", "[Serialize]") {
  const nn::SafetensorsContents contents = nn::readSafetensors("tests/fixtures/torch-dtypes.safetensors");
  std::map<std::string, std::string> dtypes;
  for (size_t k = 0; k < contents.tensors.size(); ++k) dtypes[contents.tensors[k].name] = contents.dtypes.at(k);
  CHECK(dtypes == std::map<std::string, std::string>{{"f64", "F64"},
                                                     {"f32", "F32"},
                                                     {"f16", "F16"},
                                                     {"bf16", "BF16"},
                                                     {"i64", "I64"},
                                                     {"i32", "I32"},
                                                     {"i16", "I16"},
                                                     {"i8", "I8"},
                                                     {"u8", "U8"},
                                                     {"bool", "BOOL"}});
  auto v = valuesByName(contents);
  // F64: 0.1 to the nearest float; 1e300 beyond float's range to infinity; -1e-50 to -0;
  // 3.4028235e38 (FLT_MAX plus less than half its last place) to FLT_MAX; 3.4028235677973366e38
  // (FLT_MAX plus exactly half its last place, 2^103) to the even neighbour, infinity.
  CHECK(v["f64"] == std::vector<float>{1.5f, -2.25f, 0.1f, kInf, -0.f, std::numeric_limits<float>::max(), kInf});
  CHECK(sameBits(v["f64"][4], -0.f));
  CHECK(v["f32"] == std::vector<float>{0.5f, -3.f, kInf});
  CHECK(v["f16"] == std::vector<float>{1.f, -2.f, 65504.f, std::ldexp(1.f, -24), std::ldexp(1.f, -14), -kInf, -0.f});
  CHECK(sameBits(v["f16"][6], -0.f));
  // BF16: 3.3895313892515355e38 is its largest finite value (0x7f7f), 2^-133 a subnormal.
  CHECK(v["bf16"] == std::vector<float>{1.f, -5.f, nn::math::floatFromBits(0x7f7f0000), std::ldexp(1.f, -133), kInf});
  // Integers to the nearest float: 2^53 + 1 and 2^24 + 1 round to even.
  CHECK(v["i64"] == std::vector<float>{0.f, -1.f, std::ldexp(1.f, 53), -std::ldexp(1.f, 63), 16777216.f});
  CHECK(v["i32"] == std::vector<float>{-std::ldexp(1.f, 31), 123.f});
  CHECK(v["i16"] == std::vector<float>{-32768.f, 7.f});
  CHECK(v["i8"] == std::vector<float>{-128.f, 127.f});
  CHECK(v["u8"] == std::vector<float>{255.f, 0.f});
  CHECK(v["bool"] == std::vector<float>{0.f, 1.f, 1.f});
}

TEST_CASE("a byte of BOOL other than 0 and 1 reads as true; F16 rounds nothing over a large tensor", "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("raw.safetensors");
  writeBytes(path, rawFile(R"({"b":{"dtype":"BOOL","shape":[4],"data_offsets":[0,4]}})", std::string("\0\1\2\xff", 4)));
  CHECK(valuesByName(nn::readSafetensors(path))["b"] == std::vector<float>{0.f, 1.f, 1.f, 1.f});

  // Every half value, twice over (past the reader's 1 MiB chunk): each the exact float.
  const int64_t n = 2 * 65536 * 5;
  std::string data(static_cast<size_t>(2 * n), '\0');
  for (int64_t i = 0; i < n; ++i) {
    data[static_cast<size_t>(2 * i)] = static_cast<char>(i & 0xff);
    data[static_cast<size_t>(2 * i + 1)] = static_cast<char>((i >> 8) & 0xff);
  }
  writeBytes(path, rawFile(R"({"h":{"dtype":"F16","shape":[5,131072],"data_offsets":[0,)" + std::to_string(2 * n) +
                               "]}}",
                           data));
  const std::vector<float> h = nn::readSafetensors(path).tensors.at(0).value.toVector();
  REQUIRE(h.size() == static_cast<size_t>(n));
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto bits = static_cast<uint16_t>(i & 0xffff);
    const float want = nn::math::halfToFloat(bits);
    // Against the value of the bits by their definition: (-1)^s 2^(e-15) (1 + m/1024), or the subnormal's.
    const int e = (bits >> 10) & 0x1f, m = bits & 0x3ff;
    const float sign = (bits & 0x8000) != 0 ? -1.f : 1.f;
    const float byDefinition = e == 0    ? sign * std::ldexp(static_cast<float>(m), -24)
                               : e == 31 ? (m == 0 ? sign * kInf : std::numeric_limits<float>::quiet_NaN())
                                         : sign * std::ldexp(1.f + static_cast<float>(m) / 1024.f, e - 15);
    const bool ok = std::isnan(byDefinition) ? std::isnan(h[static_cast<size_t>(i)])
                                             : sameBits(h[static_cast<size_t>(i)], byDefinition);
    if (!ok || !(std::isnan(want) ? std::isnan(h[static_cast<size_t>(i)]) : sameBits(h[static_cast<size_t>(i)], want)))
      ++wrong;
  }
  CHECK(wrong == 0);
}

TEST_CASE("a dtype PyTorch does not write, or sizes that disagree with the dtype, are errors naming both",
          "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("raw.safetensors");
  writeBytes(path, rawFile(R"({"w":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})", "ab"));
  CHECK_THROWS_WITH(nn::readSafetensors(path), Catch::Contains(path) && Catch::Contains("tensor 'w'") &&
                                                   Catch::Contains("dtype \"F8_E4M3\" is not supported") &&
                                                   Catch::Contains("F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL"));
  writeBytes(path, rawFile(R"({"w":{"dtype":"F16","shape":[3],"data_offsets":[0,12]}})", std::string(12, '\0')));
  CHECK_THROWS_WITH(nn::readSafetensors(path), Catch::Contains("tensor 'w'") && Catch::Contains("hold 12 bytes") &&
                                                   Catch::Contains("shape [3] of F16 needs 6"));
  writeBytes(path, rawFile(R"({"w":{"dtype":"I64","shape":[3],"data_offsets":[0,12]}})", std::string(12, '\0')));
  CHECK_THROWS_WITH(nn::readSafetensors(path), Catch::Contains("shape [3] of I64 needs 24"));
  writeBytes(path, rawFile(R"({"w":{"dtype":7,"shape":[3],"data_offsets":[0,12]}})", std::string(12, '\0')));
  CHECK_THROWS_WITH(nn::readSafetensors(path), Catch::Contains("missing dtype"));
}

TEST_CASE("PyTorch's BF16 state dict of a network with batch normalisation gives PyTorch's logits", "[Serialize]") {
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::SpatialConvolution>(1, 2, 3, 3));
  net->add(std::make_shared<nn::SpatialBatchNormalization>(2));
  net->add(std::make_shared<nn::ReLU>());
  net->add(std::make_shared<nn::View>(std::vector<int64_t>{-1, 32}));
  net->add(std::make_shared<nn::Linear>(32, 3));
  // Strict, as by default: the file's I64 num_batches_tracked is reported, not refused.
  const nn::LoadReport report = nn::loadStateInto(*net, "tests/fixtures/torch-bn-net.safetensors");
  CHECK(report.complete());
  CHECK(report.loaded.size() == 8);
  REQUIRE(report.ignored.size() == 1);
  CHECK(report.ignored[0].fileName == "1.num_batches_tracked");
  CHECK_THAT(report.ignored[0].reason, Catch::Contains("batch count"));

  net->evaluate();
  const auto io = valuesByName(nn::readSafetensors("tests/fixtures/torch-bn-net-io.safetensors"));
  const std::vector<float> y = net->forward(Tensor::fromVector({2, 1, 6, 6}, io.at("input"))).toVector();
  const std::vector<float>& want = io.at("logits");
  REQUIRE(y.size() == want.size());
  for (size_t i = 0; i < y.size(); ++i) CHECK(y[i] == Approx(want[i]).epsilon(1e-5).margin(1e-6));
}

TEST_CASE("non-strict loading copies what matches and reports the rest; strict loads nothing", "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("m.safetensors");
  nn::save(*mlp(10, 0.25f), path);  // 0.weight [4, 3], 0.bias [4], 2.weight [10, 4], 2.bias [10]

  // Another class count: strict refuses, naming the tensor, and copies nothing.
  nn::ModulePtr five = mlp(5, -1.f);
  CHECK_THROWS_WITH(nn::loadStateInto(*five, path),
                    Catch::Contains("tensor '2.weight': shape [10, 4] in the file, but nn.Sequential expects [5, 4]"));
  for (const nn::NamedTensor& t : five->stateDict()) CHECK(t.value.toVector() == std::vector<float>(t.value.numel(), -1.f));

  nn::LoadOptions loose;
  loose.strict = false;
  const nn::LoadReport report = nn::loadStateInto(*five, path, loose);
  CHECK(report.loaded == std::vector<std::string>{"0.weight", "0.bias"});
  REQUIRE(report.mismatched.size() == 2);
  CHECK(report.mismatched[0].name == "2.weight");
  CHECK(report.mismatched[0].moduleShape == std::vector<int64_t>{5, 4});
  CHECK(report.mismatched[0].fileShape == std::vector<int64_t>{10, 4});
  CHECK(report.missing.empty());
  CHECK(report.unexpected.empty());
  CHECK_FALSE(report.complete());
  CHECK_THAT(report.toString(), Catch::Contains("2.weight (module [5, 4], file [10, 4])"));
  const auto state = five->stateDict();
  CHECK(state[0].value.toVector() == std::vector<float>(12, 0.25f));
  CHECK(state[2].value.toVector() == std::vector<float>(20, -1.f));  // kept

  // A deeper module: its extra layer is missing, reported, and keeps its values.
  auto deeper = std::dynamic_pointer_cast<nn::Sequential>(mlp(10, -1.f));
  deeper->add(std::make_shared<nn::Linear>(10, 2));
  const std::vector<float> drawn = deeper->stateDict()[4].value.toVector();
  const nn::LoadReport deep = nn::loadStateInto(*deeper, path, loose);
  CHECK(deep.missing == std::vector<std::string>{"3.weight", "3.bias"});
  CHECK(deep.loaded.size() == 4);
  CHECK(deeper->stateDict()[4].value.toVector() == drawn);
  CHECK(deeper->stateDict()[2].value.toVector() == std::vector<float>(40, 0.25f));

  // A shorter one: the file's last layer is unexpected.
  auto shorter = std::make_shared<nn::Sequential>();
  shorter->add(std::make_shared<nn::Linear>(3, 4));
  const nn::LoadReport shortReport = nn::loadStateInto(*shorter, path, loose);
  CHECK(shortReport.unexpected == std::vector<std::string>{"2.weight", "2.bias"});
  CHECK(shortReport.loaded == std::vector<std::string>{"0.weight", "0.bias"});
  CHECK_THAT(shortReport.toString(), Catch::Contains("unexpected: 2.weight 2.bias"));
}

TEST_CASE("a filter leaves the classifier out; prefixes and a renaming map the file's names", "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("m.safetensors");
  nn::save(*mlp(10, 0.5f), path);

  // Fine-tuning with another class count, strictly: all but the classifier must match.
  nn::ModulePtr five = mlp(5, -1.f);
  nn::LoadOptions options;
  options.filter = [](const std::string& name) { return name.rfind("2.", 0) != 0; };
  const nn::LoadReport report = nn::loadStateInto(*five, path, options);
  CHECK(report.complete());
  CHECK(report.loaded == std::vector<std::string>{"0.weight", "0.bias"});
  REQUIRE(report.ignored.size() == 2);
  CHECK(report.ignored[0].fileName == "2.weight");
  CHECK(report.ignored[0].reason == "left out by the filter");
  CHECK(five->stateDict()[0].value.toVector() == std::vector<float>(12, 0.5f));
  CHECK(five->stateDict()[2].value.toVector() == std::vector<float>(20, -1.f));

  // The same model nested one level down: a prefix maps "0." to "1.0." and "2." to "1.2.".
  auto outer = std::make_shared<nn::Sequential>();
  outer->add(std::make_shared<nn::ReLU>());
  outer->add(mlp(10, -1.f));
  nn::LoadOptions nested;
  nested.prefixes = {{"0.", "1.0."}, {"2.", "1.2."}};
  const nn::LoadReport moved = nn::loadStateInto(*outer, path, nested);
  CHECK(moved.loaded == std::vector<std::string>{"1.0.weight", "1.0.bias", "1.2.weight", "1.2.bias"});
  for (const nn::NamedTensor& t : outer->stateDict()) CHECK(t.value.toVector() == std::vector<float>(t.value.numel(), 0.5f));

  // Without the second prefix, strict loading names the module's tensor and the file's.
  nested.prefixes = {{"0.", "1.0."}};
  CHECK_THROWS_WITH(nn::loadStateInto(*outer, path, nested), Catch::Contains("tensor '1.2.weight' is missing"));
  nested.prefixes = {{"0.", "1.0."}, {"2.", "1.2."}};
  nested.rename = [](const std::string& name) { return name == "1.2.bias" ? std::string("1.2.other") : name; };
  CHECK_THROWS_WITH(nn::loadStateInto(*outer, path, nested), Catch::Contains("tensor '1.2.bias' is missing"));
  nested.strict = false;
  const nn::LoadReport renamed = nn::loadStateInto(*outer, path, nested);
  CHECK(renamed.missing == std::vector<std::string>{"1.2.bias"});
  CHECK(renamed.unexpected == std::vector<std::string>{"1.2.other"});

  // A renaming to nothing leaves a tensor out; two names renamed to one are an error either way.
  nested.rename = [](const std::string& name) { return name == "1.2.bias" ? std::string() : name; };
  const nn::LoadReport dropped = nn::loadStateInto(*outer, path, nested);
  REQUIRE(dropped.ignored.size() == 1);
  CHECK(dropped.ignored[0].fileName == "2.bias");
  CHECK(dropped.missing == std::vector<std::string>{"1.2.bias"});
  nested.rename = [](const std::string& name) { return name == "1.2.bias" ? std::string("1.2.weight") : name; };
  CHECK_THROWS_WITH(nn::loadStateInto(*outer, path, nested),
                    Catch::Contains("tensor '1.2.weight' appears twice (the file's '2.weight' and '2.bias')"));
}

TEST_CASE("a batch count is ignored only beside running statistics that have none", "[Serialize]") {
  TempDir dir;
  const std::string path = dir.file("m.safetensors");
  nn::ModulePtr net = mlp(2, 0.5f);
  std::vector<nn::NamedTensor> tensors = net->stateDict();
  tensors.push_back({"0.num_batches_tracked", Tensor::fromVector({1}, {3.f})});
  nn::writeSafetensors(path, tensors, {});
  // Linear has no running statistics: the count is unexpected there.
  CHECK_THROWS_WITH(nn::loadStateInto(*net, path), Catch::Contains("unexpected tensor '0.num_batches_tracked'"));
}
