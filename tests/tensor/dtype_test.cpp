// Tensors of the element types (nn/tensor/DType.h): the conversions of copy_ and to(DType), bit for
// bit against nn/math/Half.h and against hand-written bits, on every device; views and copies
// of bfloat16 and float16 tensors across strides and devices; the storage's bytes; the errors of
// the float32-only operations and modules; safetensors files of mixed element types; hostile sizes.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "nn/io/Serialize.h"
#include "nn/math/Half.h"
#include "nn/nn.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/TempDir.h"

using nn::Device;
using nn::DType;
using nn::Tensor;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

uint32_t bitsOf(float x) { return nn::math::bitsOfFloat(x); }

// The bits of a CPU tensor of a 16-bit type, in row-major order.
std::vector<uint16_t> bitsOf(const Tensor& t) {
  const Tensor host = t.to(Device()).contiguous();
  const uint16_t* p = host.data<uint16_t>();
  return std::vector<uint16_t>(p, p + host.numel());
}

// Values where the roundings differ: ties to even, subnormals of float16, the edges of its range
// (65504 its largest, 65520 the first value that rounds to infinity), float32's largest (which
// bfloat16 rounds to infinity), infinities, NaN, zeros of both signs, a float32 subnormal.
std::vector<float> handChosen() {
  return {1.f,
          -2.5f,
          1.f + std::ldexp(1.f, -8),                         // bfloat16: a tie, to even (1)
          1.f + 3 * std::ldexp(1.f, -8),                     // bfloat16: a tie, to even (up)
          1.f + std::ldexp(1.f, -8) + std::ldexp(1.f, -20),  // bfloat16: just above a tie
          1.f + std::ldexp(1.f, -11),                        // float16: a tie, to even (1)
          1.f + 3 * std::ldexp(1.f, -11),                    // float16: a tie, to even (up)
          65504.f,
          65519.f,
          65520.f,
          -1e6f,
          std::numeric_limits<float>::max(),
          std::ldexp(1.f, -24),     // float16's smallest subnormal
          std::ldexp(1.f, -25),     // a tie between 0 and it: 0
          std::ldexp(1.5f, -25),    // above the tie: 2^-24
          std::ldexp(3.f, -25),     // a tie between 1 and 2 units: 2 (even)
          std::ldexp(1023.f, -24),  // float16's largest subnormal
          std::ldexp(1.f, -14),     // float16's smallest normal
          std::ldexp(2047.f, -25),  // rounds up from the subnormals to the smallest normal
          0.f,
          -0.f,
          kInf,
          -kInf,
          std::numeric_limits<float>::quiet_NaN(),
          -std::numeric_limits<float>::quiet_NaN(),
          std::numeric_limits<float>::denorm_min(),
          0.1f,
          1.f / 3.f};
}

// A safetensors file of one tensor entry `entry` (JSON) and `dataBytes` zero bytes of data.
void writeRawSafetensors(const std::string& path, const std::string& entry, size_t dataBytes) {
  std::string header = "{\"x\":" + entry + "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>(static_cast<uint64_t>(header.size()) >> (8 * i)));
  out << header << std::string(dataBytes, '\0');
}

}  // namespace

TEST_CASE("floatToHalf and floatToBfloat16 give the bits of hand-computed roundings", "[DType]") {
  using nn::math::floatToBfloat16;
  using nn::math::floatToHalf;
  CHECK(floatToHalf(1.f) == 0x3c00);
  CHECK(floatToHalf(-2.5f) == 0xc100);
  CHECK(floatToHalf(1.f + std::ldexp(1.f, -11)) == 0x3c00);      // tie, to even
  CHECK(floatToHalf(1.f + 3 * std::ldexp(1.f, -11)) == 0x3c02);  // tie, to even
  CHECK(floatToHalf(65504.f) == 0x7bff);
  CHECK(floatToHalf(65519.f) == 0x7bff);
  CHECK(floatToHalf(65520.f) == 0x7c00);  // overflows to infinity
  CHECK(floatToHalf(-1e6f) == 0xfc00);
  CHECK(floatToHalf(std::ldexp(1.f, -24)) == 0x0001);
  CHECK(floatToHalf(std::ldexp(1.f, -25)) == 0x0000);
  CHECK(floatToHalf(std::ldexp(1.5f, -25)) == 0x0001);
  CHECK(floatToHalf(std::ldexp(3.f, -25)) == 0x0002);
  CHECK(floatToHalf(std::ldexp(1023.f, -24)) == 0x03ff);
  CHECK(floatToHalf(std::ldexp(1.f, -14)) == 0x0400);
  CHECK(floatToHalf(std::ldexp(2047.f, -25)) == 0x0400);
  CHECK(floatToHalf(-0.f) == 0x8000);
  CHECK(floatToHalf(std::numeric_limits<float>::denorm_min()) == 0x0000);
  CHECK(floatToHalf(0.1f) == 0x2e66);
  CHECK(floatToHalf(kInf) == 0x7c00);
  const uint16_t nan = floatToHalf(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7c00) == 0x7c00);
  CHECK((nan & 0x03ff) != 0);
  CHECK(floatToBfloat16(1.f + std::ldexp(1.f, -8)) == 0x3f80);
  CHECK(floatToBfloat16(1.f + 3 * std::ldexp(1.f, -8)) == 0x3f82);
  CHECK(floatToBfloat16(65504.f) == 0x4780);
  CHECK(floatToBfloat16(std::numeric_limits<float>::max()) == 0x7f80);
  CHECK(floatToBfloat16(0.1f) == 0x3dcd);
  // Every float16 goes to float32 and back unchanged (NaNs stay NaNs).
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float x = nn::math::halfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(x)) continue;
    REQUIRE(floatToHalf(x) == h);
  }
}

NN_DEVICE_TEST_CASE("copy_ converts to and from bfloat16 and float16 as nn/math/Half.h, bit for bit", "[DType]") {
  const std::vector<float> values = handChosen();
  const auto n = static_cast<int64_t>(values.size());
  const Tensor x = kind.on(Tensor::fromVector({n}, values));
  const Tensor bf = x.to(DType::BFloat16), half = x.to(DType::Float16);
  REQUIRE(bf.dtype() == DType::BFloat16);
  REQUIRE(half.dtype() == DType::Float16);
  REQUIRE(bf.device() == kind.device());
  REQUIRE(half.sizes() == x.sizes());
  const std::vector<uint16_t> bfBits = bitsOf(bf), halfBits = bitsOf(half);
  for (int64_t i = 0; i < n; ++i) {
    INFO("value " << values[i]);
    CHECK(bfBits[i] == nn::math::floatToBfloat16(values[i]));
    CHECK(halfBits[i] == nn::math::floatToHalf(values[i]));
  }
  // A few against their bits written out: float16's overflow, its largest value, a subnormal.
  CHECK(halfBits[7] == 0x7bff);
  CHECK(halfBits[9] == 0x7c00);
  CHECK(halfBits[15] == 0x0002);
  CHECK(bfBits[11] == 0x7f80);
  // Widening is exact, through to(Float32) and toVector alike.
  const std::vector<float> bfBack = bf.to(DType::Float32).toVector(), halfBack = half.toVector();
  for (int64_t i = 0; i < n; ++i) {
    CHECK(bitsOf(bfBack[i]) == bitsOf(nn::math::bfloat16ToFloat(bfBits[i])));
    CHECK(bitsOf(halfBack[i]) == bitsOf(nn::math::halfToFloat(halfBits[i])));
  }
  // Between the 16-bit types, through float32.
  const std::vector<uint16_t> bfToHalf = bitsOf(bf.to(DType::Float16));
  for (int64_t i = 0; i < n; ++i) CHECK(bfToHalf[i] == nn::math::floatToHalf(nn::math::bfloat16ToFloat(bfBits[i])));
  // to() of the tensor's own type is the tensor itself.
  CHECK(bf.to(DType::BFloat16).is(bf));
}

NN_DEVICE_TEST_CASE("views and copies of bfloat16 and float16 tensors, across strides and devices", "[DType]") {
  std::vector<float> values(24);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) - 5.f;  // exact in both types
  const Tensor host = Tensor::fromVector({2, 3, 4}, values);
  for (DType type : {DType::BFloat16, DType::Float16}) {
    INFO(nn::dtypeName(type));
    const Tensor t = kind.on(host).to(type);
    REQUIRE(t.toVector() == values);
    // Views count elements of the type.
    CHECK(t.select(0, 1).toVector() == host.select(0, 1).toVector());
    CHECK(t.narrow(2, 1, 2).toVector() == host.narrow(2, 1, 2).toVector());
    CHECK(t.narrow(2, 1, 2).storageOffset() == 1);
    const Tensor tt = t.transpose(0, 2);
    CHECK_FALSE(tt.isContiguous());
    CHECK(tt.toVector() == host.transpose(0, 2).toVector());
    CHECK(tt.contiguous().toVector() == host.transpose(0, 2).toVector());
    CHECK(tt.clone().dtype() == type);
    CHECK(t.view({6, 4}).select(0, 5).toVector() == host.view({6, 4}).select(0, 5).toVector());
    // A strided 16-bit destination on this device, from float32 on another device.
    Tensor wide = Tensor::zeros({2, 3, 8}, kind.device(), type);
    Tensor odd = wide.narrow(2, 3, 4);
    odd.copy_(host.to(kind.other()));
    CHECK(odd.toVector() == values);
    CHECK(wide.narrow(2, 0, 3).toVector() == std::vector<float>(18, 0.f));
    CHECK(wide.narrow(2, 7, 1).toVector() == std::vector<float>(6, 0.f));
    // Strided 16-bit to strided 16-bit between devices, and to float32 on the host.
    Tensor there = Tensor::full({4, 3, 2}, 7.f, kind.other(), type);
    there.transpose(0, 2).copy_(odd);
    CHECK(there.transpose(0, 2).toVector() == values);
    Tensor back = Tensor::empty({4, 3, 2});
    back.copy_(there);
    CHECK(back.toVector() == there.toVector());
    // fill_ rounds to the type, on strided views too.
    Tensor f = Tensor::zeros({3, 4}, kind.device(), type);
    f.narrow(1, 1, 2).fill_(0.1f);
    const float rounded = type == DType::BFloat16 ? nn::math::bfloat16ToFloat(nn::math::floatToBfloat16(0.1f))
                                                  : nn::math::halfToFloat(nn::math::floatToHalf(0.1f));
    CHECK(f.toVector() == std::vector<float>{0, rounded, rounded, 0, 0, rounded, rounded, 0, 0, rounded, rounded, 0});
    // to(Device) keeps the type; resize_ and set_ keep or take it.
    CHECK(t.to(kind.other()).dtype() == type);
    Tensor r = Tensor::empty({2}, kind.device(), type);
    r.resize_({5, 5});
    CHECK(r.dtype() == type);
    CHECK(r.storage()->dtype() == type);
    Tensor s;
    s.set_(t.storage(), 4, {2, 2});
    CHECK(s.dtype() == type);
    CHECK(s.toVector() == std::vector<float>{-1, 0, 1, 2});
    Tensor u;
    u.set_(tt);
    CHECK(u.dtype() == type);
    // An overlapping copy within one 16-bit storage reads the source whole first.
    Tensor line = kind.on(Tensor::fromVector({6}, {1, 2, 3, 4, 5, 6})).to(type);
    line.narrow(0, 1, 5).copy_(line.narrow(0, 0, 5));
    CHECK(line.toVector() == std::vector<float>{1, 1, 2, 3, 4, 5});
  }
  // A float32 buffer stays float32 when resized to a 16-bit tensor's sizes and converts on copy_.
  Tensor buffer;
  const Tensor bf = kind.on(host).to(DType::BFloat16).transpose(1, 2);
  const Tensor& c = nn::contiguousIn(bf, buffer);
  CHECK(c.dtype() == DType::Float32);
  CHECK(c.toVector() == host.transpose(1, 2).toVector());
}

TEST_CASE("a bfloat16 or float16 storage takes half a float32 one's bytes", "[DType]") {
  const Tensor f = Tensor::empty({3, 5});
  const Tensor b = Tensor::empty({3, 5}, Device(), DType::BFloat16);
  const Tensor h = Tensor::zeros({3, 5}, Device(), DType::Float16);
  CHECK(f.storage()->count() == 15);
  CHECK(b.storage()->count() == 15);
  CHECK(f.storage()->byteCount() == 60);
  CHECK(b.storage()->byteCount() == 30);
  CHECK(h.storage()->byteCount() == 30);
  CHECK(b.numel() == 15);
  // The storage limit counts bytes of the type: 600 bfloat16 fit in 1,200 bytes, 600 floats do not.
  {
    nn::StorageLimit limit(1200, "the test's tensors");
    CHECK_NOTHROW(Tensor::empty({600}, Device(), DType::BFloat16));
    CHECK_THROWS_WITH(Tensor::empty({600}), Catch::Contains("2400 bytes"));
  }
  // Typed access: float for float32, uint16_t for the 16-bit types; each refuses the other.
  CHECK(b.data<uint16_t>() == static_cast<uint16_t*>(b.storage()->bytes()));
  CHECK(f.data<float>() == f.data());
  CHECK_THROWS_WITH(b.data<float>(), Catch::Contains("float32") && Catch::Contains("bfloat16"));
  CHECK_THROWS_WITH(f.data<uint16_t>(), Catch::Contains("float32"));
  CHECK_THROWS_WITH(b.storage()->data(), Catch::Contains("expected a float32 storage, got a bfloat16"));
  CHECK_THROWS_WITH(h.data(), Catch::Contains("nn.Tensor.data") && Catch::Contains("float16"));
}

TEST_CASE("float32 operations and modules refuse bfloat16 and float16 tensors, naming both types", "[DType]") {
  const Tensor b = Tensor::full({2, 3}, 1.5f, Device(), DType::BFloat16);
  const Tensor h = Tensor::full({2, 3}, 2.f, Device(), DType::Float16);
  const Tensor f = Tensor::full({2, 3}, 1.f);
  Tensor x = b.clone();
  CHECK_THROWS_WITH(x.add_(f),
                    Catch::Contains("nn.Tensor.add_") && Catch::Contains("bfloat16") && Catch::Contains("float32"));
  CHECK_THROWS_WITH(Tensor::zeros({2, 3}).add_(h), Catch::Contains("nn.Tensor.add_: expected float32 tensors, got "
                                                                   "float32 and float16"));
  CHECK_THROWS_WITH(x.mul_(2.f), Catch::Contains("nn.Tensor.mul_: expected a float32 tensor, got a bfloat16 one"));
  CHECK_THROWS_WITH(x.cmul_(f), Catch::Contains("nn.Tensor.cmul_") && Catch::Contains("bfloat16"));
  CHECK_THROWS_WITH(f.clone().cdiv_(h), Catch::Contains("nn.Tensor.cdiv_") && Catch::Contains("float16"));
  CHECK_THROWS_WITH(h.sum(1), Catch::Contains("nn.Tensor.sum") && Catch::Contains("float16"));
  CHECK_THROWS_WITH(b.argmax(0), Catch::Contains("nn.Tensor.argmax") && Catch::Contains("bfloat16"));
  CHECK_THROWS_WITH(b.eq(f), Catch::Contains("nn.Tensor.eq") && Catch::Contains("bfloat16"));
  CHECK_THROWS_WITH(f.lt(h), Catch::Contains("nn.Tensor.lt") && Catch::Contains("float16"));
  CHECK_THROWS_WITH(b.rawData(), Catch::Contains("float32") && Catch::Contains("bfloat16"));
  Tensor joined;
  std::vector<int64_t> sizes;
  CHECK_THROWS_WITH(nn::joinAlong({&b, &b}, 0, Device(), joined, sizes, [](size_t i) { return std::to_string(i); }),
                    Catch::Contains("float32") && Catch::Contains("bfloat16"));
  // What only reads converts: the values are unchanged and exact.
  CHECK(b.toVector() == std::vector<float>(6, 1.5f));
  CHECK(b.sum() == 9.0);
  CHECK(h.at({1, 2}) == 2.f);
  CHECK(b.select(0, 1).select(0, 2).item() == 1.5f);
  CHECK(x.toVector() == std::vector<float>(6, 1.5f));  // the refused operations changed nothing

  // A module names itself, the tensor and its type; a container leaves it to the module.
  auto linear = std::make_shared<nn::Linear>(784, 10);
  const Tensor input = Tensor::zeros({2, 784}, Device(), DType::BFloat16);
  CHECK_THROWS_WITH(linear->forward(input),
                    Catch::Contains("nn.Linear(784 -> 10): input is bfloat16, this module computes in float32"));
  nn::Sequential net(std::vector<nn::ModulePtr>{linear});
  CHECK_THROWS_WITH(net.forward(input), Catch::Contains("nn.Linear(784 -> 10): input is bfloat16"));
  const Tensor ok = Tensor::zeros({2, 784});
  linear->forward(ok);
  CHECK_THROWS_WITH(linear->backward(ok, Tensor::zeros({2, 10}, Device(), DType::Float16)),
                    Catch::Contains("nn.Linear(784 -> 10): gradOutput is float16, this module computes in float32"));
  CHECK_THROWS_WITH(linear->forward(nn::Activity(input)), Catch::Contains("nn.Linear(784 -> 10): input is bfloat16"));
  // The same module takes float32 still.
  CHECK(linear->forward(ok).dtype() == DType::Float32);
}

TEST_CASE("operator<< names the element type where it is not float32", "[DType]") {
  std::ostringstream out;
  out << Tensor::fromVector({2, 3}, {1, 2, 3, 4, 5, 6}).to(DType::BFloat16);
  CHECK(out.str() == "nn.Tensor [2, 3] bfloat16 on cpu:0 {1, 2, 3, 4, 5, 6}");
  std::ostringstream plain;
  plain << Tensor::fromVector({2}, {1, 2});
  CHECK(plain.str() == "nn.Tensor [2] on cpu:0 {1, 2}");
}

TEST_CASE("safetensors files hold F32, BF16 and F16 tensors, and a mixed state dict round-trips", "[DType]") {
  nn::test::TempDir dir;
  const std::string path = dir.file("mixed.safetensors");
  const std::vector<float> special = {1.f, -0.f, std::ldexp(1.f, -24), 65504.f, kInf, -kInf, 0.1f, 3.f};
  const Tensor f = Tensor::fromVector({2, 4}, special);
  const Tensor b = f.to(DType::BFloat16);
  const Tensor h = f.transpose(0, 1).to(DType::Float16);  // written from any strides
  Tensor nan = Tensor::full({3}, std::numeric_limits<float>::quiet_NaN(), Device(), DType::Float16);
  nn::writeSafetensors(path, {{"f", f}, {"b", b}, {"h", h.transpose(0, 1)}, {"nan", nan}}, {{"k", "v"}});
  // 2 bytes an element for the 16-bit types: the data section is 32 + 16 + 16 + 6 bytes.
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  const auto fileBytes = static_cast<int64_t>(file.tellg());
  file.seekg(0);
  uint64_t headerBytes = 0;
  for (int i = 0; i < 8; ++i) headerBytes |= static_cast<uint64_t>(static_cast<uint8_t>(file.get())) << (8 * i);
  CHECK(fileBytes == static_cast<int64_t>(8 + headerBytes + 32 + 16 + 16 + 6));

  const nn::SafetensorsContents kept = nn::readSafetensors(path, /*keepElementTypes=*/true);
  REQUIRE(kept.tensors.size() == 4);
  CHECK(kept.dtypes == std::vector<std::string>{"F32", "BF16", "F16", "F16"});
  CHECK(kept.tensors[0].value.dtype() == DType::Float32);
  CHECK(kept.tensors[1].value.dtype() == DType::BFloat16);
  CHECK(kept.tensors[2].value.dtype() == DType::Float16);
  CHECK(kept.tensors[0].value.toVector() == special);
  CHECK(bitsOf(kept.tensors[1].value) == bitsOf(b));
  CHECK(bitsOf(kept.tensors[2].value) == bitsOf(h.transpose(0, 1)));
  CHECK(bitsOf(kept.tensors[3].value) == bitsOf(nan));
  CHECK(kept.tensors[2].value.sizes() == std::vector<int64_t>{2, 4});
  // Written again as read, the file is the same.
  const std::string again = dir.file("again.safetensors");
  nn::writeSafetensors(again, kept.tensors, kept.metadata);
  std::ifstream a(path, std::ios::binary), c(again, std::ios::binary);
  CHECK(std::string(std::istreambuf_iterator<char>(a), {}) == std::string(std::istreambuf_iterator<char>(c), {}));
  // By default every tensor is read as float32, the values widened exactly.
  const nn::SafetensorsContents widened = nn::readSafetensors(path);
  for (const nn::NamedTensor& t : widened.tensors) CHECK(t.value.dtype() == DType::Float32);
  CHECK(widened.tensors[1].value.toVector() == b.toVector());
  CHECK(widened.tensors[2].value.toVector() == h.transpose(0, 1).toVector());
  CHECK(std::isnan(widened.tensors[3].value.toVector()[0]));
  // A float32 module loads a BF16 state dict, each value widened.
  auto linear = std::make_shared<nn::Linear>(4, 2);
  nn::writeSafetensors(
      dir.file("linear.safetensors"),
      {{"weight", f.to(DType::BFloat16)}, {"bias", Tensor::fromVector({2}, {0.5f, -1.f}).to(DType::Float16)}}, {});
  nn::loadStateInto(*linear, dir.file("linear.safetensors"));
  CHECK(linear->weight.dtype() == DType::Float32);
  CHECK(linear->weight.toVector() == b.toVector());
  CHECK(linear->bias.toVector() == std::vector<float>{0.5f, -1.f});
}

TEST_CASE("hostile sizes of 16-bit tensors are errors, their bytes computed without overflow", "[DType]") {
  // kMaxElements bfloat16 take 2^61 bytes: the limit's message gives the exact count.
  {
    nn::StorageLimit limit(1 << 20, "the test's tensors");
    CHECK_THROWS_WITH(Tensor::empty({nn::kMaxElements}, Device(), DType::BFloat16),
                      Catch::Contains("2305843009213693952 bytes"));
    CHECK_THROWS_WITH(Tensor::empty({nn::kMaxElements}, Device(), DType::Float32),
                      Catch::Contains("4611686018427387904 bytes"));
  }
  CHECK_THROWS_WITH(nn::Storage(nn::kMaxElements + 1, Device(), DType::Float16), Catch::Contains("float16"));
  CHECK_THROWS_AS(nn::Storage(-1, Device(), DType::BFloat16), nn::Error);
  CHECK_THROWS_AS(Tensor::empty({int64_t{1} << 31, int64_t{1} << 31}, Device(), DType::BFloat16), nn::Error);
  // Views of a 16-bit storage stay inside it, counted in its elements.
  const Tensor t = Tensor::zeros({4, 4}, Device(), DType::Float16);
  CHECK_THROWS_AS(t.narrow(1, 2, 3), nn::Error);
  CHECK_THROWS_AS(t.select(0, int64_t{1} << 62), nn::Error);
  Tensor s;
  CHECK_THROWS_WITH(s.set_(t.storage(), 15, {2}), Catch::Contains("16 elements"));
  CHECK_THROWS_AS(s.set_(t.storage(), 0, {2, 2}, {int64_t{1} << 62, 1}), nn::Error);
  CHECK_NOTHROW(s.set_(t.storage(), 14, {2}));
  // A file's BF16 shape that would need more bytes than its data holds, read as it is.
  nn::test::TempDir dir;
  const std::string path = dir.file("hostile.safetensors");
  writeRawSafetensors(path, R"({"dtype":"BF16","shape":[4611686018427387904,4],"data_offsets":[0,8]})", 8);
  CHECK_THROWS_WITH(nn::readSafetensors(path, true), Catch::Contains("more than 2^62"));
  writeRawSafetensors(path, R"({"dtype":"F16","shape":[3],"data_offsets":[0,8]})", 8);
  CHECK_THROWS_WITH(nn::readSafetensors(path, true), Catch::Contains("needs 6"));
  writeRawSafetensors(path, R"({"dtype":"F16","shape":[4],"data_offsets":[0,8]})", 8);
  CHECK(nn::readSafetensors(path, true).tensors[0].value.toVector() == std::vector<float>(4, 0.f));
}
