// Sizes, offsets and indices at the ends of int64, from a caller and from a file (issue 34's
// defects 1, 2, 3 and 8): Tensor's views, set_ and resize_, and the modules whose shape
// arithmetic takes a configuration's numbers (narrowing, selecting, padding, pooling,
// convolution, tables), each refused with an nn::Error that says what is wrong, never a view
// or a buffer that reaches outside its storage. Under --config=asan any write outside fails the
// test. The checkpoints are written here: module trees without tensors, as a stranger's file.
#include <catch2/catch.hpp>
#include <climits>
#include <cstdint>
#include <memory>
#include <string>

#include "nn/io/Serialize.h"
#include "nn/modules/Narrow.h"
#include "nn/modules/NarrowTable.h"
#include "nn/modules/Select.h"
#include "nn/modules/SelectTable.h"
#include "nn/modules/SpatialConvolution.h"
#include "nn/modules/SpatialFullConvolution.h"
#include "nn/modules/SpatialMaxPooling.h"
#include "nn/modules/SpatialZeroPadding.h"
#include "nn/modules/Sum.h"
#include "nn/tensor/Checked.h"
#include "nn/tensor/Error.h"
#include "nn/tensor/Tensor.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/TempDir.h"

using Catch::Contains;
using nn::Tensor;

namespace {

constexpr int64_t kMax = INT64_MAX;
constexpr int64_t kMin = INT64_MIN;

// The message of the nn::Error that `f` throws; a failed check where it throws anything else
// (std::length_error, std::bad_alloc) or nothing.
template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const nn::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL_CHECK("expected an nn::Error, got another exception: " << e.what());
    return "";
  }
  FAIL_CHECK("expected an nn::Error, got none");
  return "";
}

// A module tree node as nn::save describes it (nn/io/Serialize.h).
std::string node(const std::string& type, const std::string& config, const std::string& children = "") {
  return R"({"type":")" + type + R"(","config":{)" + config + R"(},"training":true,"children":[)" + children + "]}";
}

// A checkpoint with the module tree `tree` and no tensors, as nn::save writes one of a model
// without parameters.
std::string writeTree(const nn::test::TempDir& dir, const std::string& name, const std::string& tree) {
  const std::string path = dir.file(name);
  nn::writeSafetensors(path, {}, {{"format", "pt"}, {"nn.module", tree}});
  return path;
}

// 0, 1, ... as `sizes`.
Tensor counting(const nn::test::DeviceKind& kind, const std::vector<int64_t>& sizes) {
  Tensor host = Tensor::empty(sizes);
  for (int64_t i = 0; i < host.numel(); ++i) host.data()[i] = static_cast<float>(i);
  return kind.on(host);
}

// Forward and backward of `module` on `input`, gradOutput all ones.
void forwardBackward(nn::Module& module, const Tensor& input) {
  const Tensor& output = module.forward(input);
  module.backward(input, Tensor::full(output.sizes(), 1.f, output.device()));
}

}  // namespace

TEST_CASE("the checked helpers add, multiply and bound ranges without overflow", "[Checked]") {
  int64_t out = 0;
  CHECK(nn::addInto(kMax - 1, 1, out));
  CHECK(out == kMax);
  CHECK_FALSE(nn::addInto(kMax, 1, out));
  CHECK_FALSE(nn::addInto(kMin, -1, out));
  CHECK_FALSE(nn::mulInto(int64_t{1} << 32, int64_t{1} << 31, out));
  CHECK(nn::mulInto(-(int64_t{1} << 31), int64_t{1} << 32, out));
  CHECK(out == kMin);

  // [offset, offset + length) within [0, size): the sums that wrap are out, not in.
  CHECK(nn::rangeWithin(0, 3, 3));
  CHECK(nn::rangeWithin(3, 0, 3));
  CHECK_FALSE(nn::rangeWithin(kMax - 1, 3, 3));
  CHECK_FALSE(nn::rangeWithin(2, kMax, 3));
  CHECK_FALSE(nn::rangeWithin(kMax, 2, 3));
  CHECK_FALSE(nn::rangeWithin(-1, 1, 3));
  CHECK_FALSE(nn::rangeWithin(1, -1, 3));

  CHECK(nn::rangeString(2, 3) == "[2, 5)");
  CHECK(nn::rangeString(kMax - 1, 3) == "[9223372036854775806, +3)");

  const auto context = [] { return std::string("the test's sum"); };
  CHECK(nn::checkedSum({1, 2, 3}, context) == 6);
  CHECK_THAT(errorOf([&] {
               nn::checkedSum({4, kMax, kMax}, context);
             }),
             Contains("the test's sum") && Contains("4 + 9223372036854775807 + 9223372036854775807"));
  CHECK(nn::checkedProduct({kMax, 2, 0}, context) == 0);
  CHECK_THAT(errorOf([&] {
               nn::checkedProduct({int64_t{1} << 40, int64_t{1} << 40}, context);
             }),
             Contains("beyond the range of a 64-bit integer"));

  // Sizes of 0 count as 1 in a tensor's extent, as its strides count them.
  const int64_t fits[] = {0, int64_t{1} << 60}, huge[] = {0, int64_t{1} << 62, 4}, negative[] = {2, -1};
  CHECK(nn::extentOf(fits, 2, out));
  CHECK_FALSE(nn::extentOf(huge, 3, out));
  CHECK_FALSE(nn::extentOf(negative, 2, out));
}

NN_DEVICE_TEST_CASE("Tensor::narrow refuses a range whose end overflows (issue 34, defect 1)", "[Tensor]") {
  const Tensor t = counting(kind, {3});
  for (const auto& [start, length] :
       {std::pair<int64_t, int64_t>{kMax - 1, 3}, {2, kMax}, {kMax, 2}, {kMin, 3}, {1, kMin}, {-1, 2}, {2, 2}}) {
    INFO("narrow(0, " << start << ", " << length << ")");
    CHECK_THAT(errorOf([&] { t.narrow(0, start, length).fill_(7.f); }),
               Contains("nn.Tensor.narrow: range " + nn::rangeString(start, length) +
                        " out of bounds for dimension 0 of sizes [3]"));
  }
  CHECK(t.toVector() == std::vector<float>{0, 1, 2});
  CHECK(t.narrow(0, 3, 0).numel() == 0);
  CHECK(t.narrow(0, 1, 2).toVector() == std::vector<float>{1, 2});

  const Tensor m = counting(kind, {2, 3});
  CHECK_THAT(errorOf([&] { m.narrow(1, kMax, 1); }), Contains("out of bounds for dimension 1 of sizes [2, 3]"));
  CHECK_THAT(errorOf([&] { m.select(0, kMax); }),
             Contains("nn.Tensor.select: index 9223372036854775807 out of bounds"));
  CHECK_THAT(errorOf([&] { m.select(1, kMin); }), Contains("nn.Tensor.select: index"));
  CHECK(m.select(1, 2).toVector() == std::vector<float>{2, 5});
}

NN_DEVICE_TEST_CASE("Tensor::set_ refuses a view before or beyond its storage (issue 34, defect 3)", "[Tensor]") {
  const Tensor owner = counting(kind, {4});
  const std::shared_ptr<nn::Storage>& storage = owner.storage();
  Tensor t;
  CHECK_THAT(errorOf([&] { t.set_(storage, -4, {4}).fill_(7.f); }),
             Contains("nn.Tensor.set_: sizes [4] at offset -4 reach outside a storage of 4 elements"));
  CHECK_THAT(errorOf([&] { t.set_(storage, -1, {0}); }), Contains("at offset -1"));
  CHECK_THAT(errorOf([&] { t.set_(storage, 1, {4}); }), Contains("reach outside a storage of 4 elements"));
  CHECK_THAT(errorOf([&] { t.set_(storage, kMax, {2}); }), Contains("reach outside"));
  CHECK_THAT(errorOf([&] { t.set_(storage, 0, {-1}); }), Contains("expected sizes of at least 0"));
  CHECK_THAT(errorOf([&] {
               t.set_(storage, 0, {int64_t{1} << 62, int64_t{1} << 62, 0});
             }),
             Contains("nn.Tensor.set_: sizes [4611686018427387904, 4611686018427387904, 0] hold more than "
                      "1152921504606846976 elements"));
  // With strides: the last element's offset, offset + (size - 1) stride, overflows or lies beyond.
  CHECK_THAT(errorOf([&] { t.set_(storage, -4, {4}, {1}).fill_(7.f); }), Contains("at offset -4 reach outside"));
  CHECK_THAT(errorOf([&] { t.set_(storage, 0, {2}, {kMax}); }), Contains("with strides [9223372036854775807]"));
  CHECK_THAT(errorOf([&] { t.set_(storage, kMax, {2}, {1}); }), Contains("reach outside"));
  CHECK_THAT(errorOf([&] { t.set_(storage, 0, {2, 2}, {2, -1}); }), Contains("reach outside"));
  CHECK_THAT(errorOf([&] { t.set_(storage, 0, {2}, {1, 1}); }), Contains("expected a stride for each of the sizes"));
  // Empty, but with a stride below 0 that a later view would step by (the view fuzzer's find).
  CHECK_THAT(errorOf([&] { t.set_(storage, 3, {0, 10}, {2, -3}); }), Contains("reach outside"));
  CHECK_THAT(errorOf([&] { t.set_(nullptr, 0, {1}); }), Contains("reach outside a storage of 0 elements"));
  CHECK(owner.toVector() == std::vector<float>{0, 1, 2, 3});

  // What stays allowed: an empty view anywhere from the start on, a stride of 0, the whole storage.
  t.set_(storage, 4, {0});
  CHECK(t.numel() == 0);
  t.set_(storage, 0, {0, 3}, {kMax, 1});
  CHECK(t.numel() == 0);
  t.set_(storage, 1, {2, 3}, {0, 1});
  CHECK(t.toVector() == std::vector<float>{1, 2, 3, 1, 2, 3});
  t.set_(storage, 0, {2, 2});
  CHECK(t.toVector() == std::vector<float>{0, 1, 2, 3});
}

NN_DEVICE_TEST_CASE("Tensor's view, resize_ and copyAlong refuse sizes whose counts overflow", "[Tensor]") {
  const Tensor t = counting(kind, {2, 3});
  CHECK_THAT(errorOf([&] { t.view({int64_t{1} << 32, int64_t{1} << 32, 0}); }), Contains("nn.Tensor.view"));
  CHECK_THAT(errorOf([&] { t.view({kMax, -1}); }), Contains("nn.Tensor.view: expected sizes of at least 0 (or -1)"));
  CHECK_THAT(errorOf([&] { t.view({4, -1}); }), Contains("nn.Tensor.view: cannot view [2, 3]"));
  CHECK_THAT(errorOf([&] { t.view({-2, 3}); }), Contains("nn.Tensor.view: expected sizes of at least 0"));
  CHECK(t.view({3, -1}).sizes() == std::vector<int64_t>{3, 2});
  // A size of 0 hides the others from the count, not from the strides.
  const Tensor empty = kind.on(Tensor::empty({0}));
  CHECK_THAT(errorOf([&] {
               empty.view({0, int64_t{1} << 62, int64_t{1} << 62});
             }),
             Contains("nn.Tensor.view: sizes [0, 4611686018427387904, 4611686018427387904] hold more than"));

  Tensor r = counting(kind, {4});
  CHECK_THAT(errorOf([&] { r.resize_({int64_t{1} << 62, int64_t{1} << 62}); }), Contains("nn.Tensor.resize_"));
  CHECK_THAT(errorOf([&] { r.resize_({kMax}); }), Contains("hold more than 1152921504606846976 elements"));
  CHECK_THAT(errorOf([&] { nn::product({kMax, 2}); }), Contains("nn::product: sizes [9223372036854775807, 2]"));
  CHECK(nn::product({kMax, 0}) == 0);
  CHECK_THAT(errorOf([&] { nn::contiguousStrides({2, kMax, kMax}); }), Contains("nn::contiguousStrides"));
  CHECK_THAT(errorOf([&] { Tensor::fromVector({kMax, kMax}, {1.f}); }), Contains("nn::product"));

  const Tensor dst = kind.on(Tensor::zeros({2, 3}));
  CHECK_THAT(errorOf([&] { nn::copyAlong(dst, kMax, t, 0, 1, 2); }), Contains("out of bounds"));
  CHECK_THAT(errorOf([&] { nn::copyAlong(dst, 0, t, 2, 1, kMax); }), Contains("out of bounds"));
  CHECK(dst.toVector() == std::vector<float>(6, 0.f));
}

NN_DEVICE_TEST_CASE("Select, Narrow and SpatialZeroPadding refuse int64's ends (issue 34, defect 2)", "[Narrow]") {
  // Indices and counts beyond any tensor's are refused when the module is made, as a file's are.
  CHECK_THAT(errorOf([] { nn::Select(1, kMax); }), Contains("nn.Select(dim=1, index=9223372036854775807): expected "
                                                            "an index from -1152921504606846976 to "
                                                            "1152921504606846976"));
  CHECK_THAT(errorOf([] { nn::Select(1, kMin); }), Contains("expected an index from"));
  CHECK_THAT(errorOf([] { nn::Narrow(3, kMax, 2); }), Contains("expected an offset and a length from"));
  CHECK_THAT(errorOf([] { nn::Narrow(3, kMax - 1, 2); }), Contains("expected an offset and a length from"));
  CHECK_THAT(errorOf([] { nn::Narrow(3, 2, kMax); }), Contains("expected an offset and a length from"));
  CHECK_THAT(errorOf([] { nn::Narrow(3, 0, kMin); }), Contains("expected an offset and a length from"));
  CHECK_THAT(errorOf([] { nn::SpatialZeroPadding(kMax, kMax, 0, 0); }),
             Contains("nn.SpatialZeroPadding(l=9223372036854775807, r=9223372036854775807, t=0, b=0): expected "
                      "counts from"));
  CHECK_THAT(errorOf([] { nn::SpatialZeroPadding(0, 0, kMin, 1); }), Contains("expected counts from"));

  // Within those bounds, what an input cannot give is an error of the forward pass.
  const Tensor input = counting(kind, {2, 3, 4, 4});
  const int64_t far = nn::kMaxElements;
  nn::Select select(1, far);
  select.to(kind.device());
  CHECK_THAT(errorOf([&] { forwardBackward(select, input); }),
             Contains("expected indices [1152921504606846976, 1152921504606846977) within the size 3 of dimension 1"));
  nn::Select back(1, -far);
  back.to(kind.device());
  CHECK_THAT(errorOf([&] { forwardBackward(back, input); }), Contains("within the size 3 of dimension 1"));
  nn::Narrow narrow(3, far - 1, 2);
  narrow.to(kind.device());
  CHECK_THAT(errorOf([&] { forwardBackward(narrow, input); }),
             Contains("expected indices [1152921504606846975, 1152921504606846977) within the size 4 of dimension 3"));
  nn::Narrow toEnd(3, 2, -far);
  toEnd.to(kind.device());
  CHECK_THAT(errorOf([&] { forwardBackward(toEnd, input); }), Contains("within the size 4 of dimension 3"));
  nn::SpatialZeroPadding wide(far, far, 0, 0);
  wide.to(kind.device());
  CHECK_THAT(errorOf([&] { forwardBackward(wide, input); }),
             Contains("expected an output of at least 1 x 1 and at most 1152921504606846976 elements, got 4 x "
                      "2305843009213693956"));
  // Cropping everything and padding it back gives zeros: nothing of the input is read.
  nn::SpatialZeroPadding away(far, -far, -far, far);
  away.to(kind.device());
  forwardBackward(away, input);
  CHECK(away.output.sizes() == input.sizes());
  CHECK(away.output.toVector() == std::vector<float>(96, 0.f));
  CHECK(away.gradInput.toVector() == std::vector<float>(96, 0.f));
}

NN_DEVICE_TEST_CASE("NarrowTable(1, INT64_MAX) is an nn::Error, not std::length_error (issue 34, defect 8)",
                    "[NarrowTable]") {
  CHECK_THAT(errorOf([] { nn::NarrowTable(1, kMax); }),
             Contains("nn.NarrowTable(offset=1, length=9223372036854775807): expected an offset and a length from"));
  CHECK_THAT(errorOf([] { nn::NarrowTable(kMin, 1); }), Contains("expected an offset and a length from"));
  const nn::Table items{counting(kind, {2}), counting(kind, {2}), counting(kind, {2})};
  nn::NarrowTable far(1, nn::kMaxElements);
  CHECK_THAT(errorOf([&] { far.forward(items); }), Contains("items [1, 1152921504606846977) are not in the input"));
  nn::NarrowTable before(-nn::kMaxElements, 2);
  CHECK_THAT(errorOf([&] { before.forward(items); }), Contains("are not in the input"));
  nn::SelectTable select(kMin);
  CHECK_THAT(errorOf([&] { select.forward(items); }), Contains("no item -9223372036854775808"));
}

NN_DEVICE_TEST_CASE("pooling, convolution and Sum refuse configurations whose sizes overflow", "[Pooling]") {
  const Tensor input = counting(kind, {1, 1, 2, 2});
  CHECK_THAT(errorOf([] { nn::SpatialMaxPooling(kMax, kMax, 1, 1, kMax / 2, kMax / 2); }),
             Contains("nn.SpatialMaxPooling: expected a kernel of at most 1152921504606846976 cells"));
  CHECK_THAT(errorOf([] { nn::SpatialMaxPooling(2, 2, kMax, 1); }), Contains("strides of at most"));
  CHECK_THAT(errorOf([] { nn::SpatialConvolution(1, 1, 1, 1, 1, 1, kMax, 0); }),
             Contains("nn.SpatialConvolution: expected kernel, stride, padding and dilation of at most"));
  CHECK_THAT(errorOf([] { nn::SpatialFullConvolution(1, 1, 1, 1, kMax, 1); }),
             Contains("nn.SpatialFullConvolution: expected kernel, stride and padding of at most"));

  // Padding 2^40 on each side of a 2 x 2 input, stride 2^40: a 3 x 3 output, but a padded plane
  // of 2^82 cells, which the kernels' workspace would be sized by.
  const int64_t big = int64_t{1} << 40;
  nn::SpatialConvolution padded(1, 1, 1, 1, big, big, big, big);
  padded.to(kind.device());
  CHECK_THAT(errorOf([&] { forwardBackward(padded, input); }),
             Contains("gives an output of 3x3 whose unfolded or padded input would exceed"));
  // Dilation 2^60 of a 3 x 3 kernel: a span of 2^61 + 1 that padding 2^60 on each side holds.
  nn::SpatialDilatedConvolution dilated(1, 1, 3, 3, 1, 1, nn::kMaxElements, nn::kMaxElements, nn::kMaxElements,
                                        nn::kMaxElements);
  dilated.to(kind.device());
  CHECK_THAT(errorOf([&] { forwardBackward(dilated, input); }),
             Contains("whose unfolded or padded input would exceed"));
  nn::SpatialDilatedConvolution wider(1, 1, 9, 1, 1, 1, 0, 0, nn::kMaxElements, 1);
  wider.to(kind.device());
  CHECK_THAT(errorOf([&] { forwardBackward(wider, input); }),
             Contains("the kernel's span: 1152921504606846976 x 8 is beyond the range of a 64-bit integer"));
  // Stride 2^60 of a full convolution: an output 2^60 + 1 cells high.
  nn::SpatialFullConvolution full(1, 1, 1, 1, nn::kMaxElements, nn::kMaxElements);
  full.to(kind.device());
  CHECK_THAT(errorOf([&] { forwardBackward(full, input); }), Contains("whose unfolded or padded planes would exceed"));

  // A file's dim may be INT_MAX, and one more for the batch dimension must not overflow.
  nn::Sum sum(INT_MAX, 1);
  sum.to(kind.device());
  CHECK_THAT(errorOf([&] { forwardBackward(sum, input); }), Contains("expected a non-empty input with dimension"));
}

TEST_CASE("checkpoints of module trees with int64's ends are refused by nn::load (issue 34, defects 1-3, 8)",
          "[Serialize]") {
  const nn::test::TempDir dir;
  const std::string max = std::to_string(kMax), min = std::to_string(kMin);
  // The issue's 271-byte checkpoint: no tensors, a Select, a Narrow and a SpatialZeroPadding.
  const std::string tree = node("nn.Sequential", "",
                                node("nn.Select", R"("dim":1,"index":)" + max) + "," +
                                    node("nn.Narrow", R"("dim":3,"offset":)" + max + R"(,"length":2)") + "," +
                                    node("nn.SpatialZeroPadding", R"("padLeft":)" + max + R"(,"padRight":)" + max +
                                                                      R"(,"padTop":0,"padBottom":0)"));
  const std::string path = writeTree(dir, "issue-34.safetensors", tree);
  CHECK_THAT(errorOf([&] { nn::load(path); }),
             Contains(path + ": module tree: module '0': cannot build nn.Select: nn.Select(dim=1, index=" + max +
                      "): expected an index from"));

  // Each extreme alone, as Tensor::narrow's (defect 1), the module's (defect 2) and set_'s
  // offsets (defect 3) come from a file: refused by the constructor that nn::load calls.
  const std::pair<std::string, std::string> refused[] = {
      {node("nn.Narrow", R"("dim":0,"offset":)" + std::to_string(kMax - 1) + R"(,"length":3)"), "nn.Narrow"},
      {node("nn.Narrow", R"("dim":0,"offset":2,"length":)" + max), "nn.Narrow"},
      {node("nn.Narrow", R"("dim":0,"offset":)" + max + R"(,"length":2)"), "nn.Narrow"},
      {node("nn.Narrow", R"("dim":0,"offset":)" + min + R"(,"length":2)"), "nn.Narrow"},
      {node("nn.Select", R"("dim":0,"index":)" + min), "nn.Select"},
      {node("nn.SpatialZeroPadding", R"("padLeft":0,"padRight":0,"padTop":)" + min + R"(,"padBottom":)" + max),
       "nn.SpatialZeroPadding"},
      {node("nn.NarrowTable", R"("offset":1,"length":)" + max), "nn.NarrowTable"},
      {node("nn.SpatialMaxPooling", R"("kW":)" + max + R"(,"kH":)" + max + R"(,"dW":1,"dH":1,"padW":)" +
                                        std::to_string(kMax / 2) + R"(,"padH":0,"ceilMode":false)"),
       "nn.SpatialMaxPooling"},
  };
  int i = 0;
  for (const auto& [module, type] : refused) {
    INFO(module);
    const std::string file = writeTree(dir, "refused-" + std::to_string(i++) + ".safetensors", module);
    CHECK_THAT(errorOf([&] { nn::load(file); }), Contains(file + ": module tree: root: cannot build " + type));
  }

  // Within the bounds, the modules load, and a forward or backward that the input cannot give
  // is an nn::Error, with nothing written outside.
  const std::string far = std::to_string(nn::kMaxElements);
  const std::string loaded[] = {
      node("nn.Narrow", R"("dim":0,"offset":)" + far + R"(,"length":3)"),
      node("nn.Narrow", R"("dim":0,"offset":2,"length":)" + far),
      node("nn.Select", R"("dim":0,"index":-)" + far),
      node("nn.SpatialZeroPadding", R"("padLeft":)" + far + R"(,"padRight":)" + far + R"(,"padTop":0,"padBottom":0)"),
  };
  const Tensor input = Tensor::zeros({3, 1, 2, 2});
  for (const std::string& module : loaded) {
    INFO(module);
    const std::string file = writeTree(dir, "loaded-" + std::to_string(i++) + ".safetensors", module);
    const nn::ModulePtr m = nn::load(file);
    CHECK_THAT(errorOf([&] { forwardBackward(*m, input); }), Contains(m->toString()));
  }
}
