// The modules that copy part of a tensor or rearrange it: nn::Narrow, nn::Select, nn::Transpose
// and nn::SpatialZeroPadding (Torch7's, dimensions from 0): reference values by hand and from
// PyTorch, finite differences, negative offsets, lengths, indices and pads, strided input on
// another device, saving, cloning and errors; on CPU devices and, where found, CUDA devices.
#include "nn/modules/Narrow.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>

#include "nn/modules/Select.h"
#include "nn/modules/SpatialZeroPadding.h"
#include "nn/modules/Transpose.h"
#include "tests/support/ActivationChecks.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/reference/SliceConstantReference.h"

using nn::Tensor;

namespace {

// 0, 1, ..., 23 as [2, 3, 4].
Tensor counting(const nn::test::DeviceKind& kind) {
  std::vector<float> values(24);
  std::iota(values.begin(), values.end(), 0.f);
  return kind.on(Tensor::fromVector({2, 3, 4}, values));
}

// The inputs and gradOutputs of tests/reference/make_slice_constant_reference.py.
Tensor formula(const std::vector<int64_t>& sizes, double scale, double step, bool cosine) {
  std::vector<float> values(static_cast<size_t>(nn::product(sizes)));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(scale * (cosine ? std::cos(step * double(i)) : std::sin(step * double(i))));
  return Tensor::fromVector(sizes, values);
}

// The module's output and input gradient for the script's input equal PyTorch's to the bit:
// both only copy.
void checkAgainstTorch(const nn::test::DeviceKind& kind, nn::Module& module, const std::vector<float>& output,
                       const std::vector<float>& gradInput) {
  const Tensor x = kind.on(formula({2, 3, 4}, 5, 0.37, false));
  const Tensor& y = module.forward(x);
  CHECK(y.toVector() == output);
  const Tensor g = kind.on(formula(y.sizes(), 1, 0.11, true));
  CHECK(module.backward(x, g).toVector() == gradInput);
}

// Saved and loaded, and cloned: the same type, settings and results.
void checkCopies(const nn::test::DeviceKind& kind, nn::Module& module) {
  const Tensor x = counting(kind);
  const std::vector<float> y = module.forward(x).toVector();
  for (const nn::ModulePtr& copy : {nn::test::savedAndLoaded(module), module.clone()}) {
    CHECK(copy->toString() == module.toString());
    copy->to(kind.device());
    CHECK(copy->forward(x).toVector() == y);
  }
}

}  // namespace

NN_DEVICE_TEST_CASE("Narrow copies indices along a dimension and gives gradOutput back there", "[Narrow]") {
  nn::Narrow narrow(1, 1, 2);
  REQUIRE(narrow.toString() == "nn.Narrow(dim=1, offset=1, length=2)");
  const Tensor x = counting(kind);
  // Rows 1 and 2 of each sample: 4..11 and 16..23.
  const Tensor& y = narrow.forward(x);
  REQUIRE(y.sizes() == std::vector<int64_t>{2, 2, 4});
  REQUIRE(y.toVector() == std::vector<float>{4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23});
  REQUIRE(y.storage() != x.storage());  // a copy, as Torch7's
  // gradOutput 1..16 goes back to rows 1 and 2; row 0 of each sample gets 0.
  std::vector<float> gradOut(16);
  std::iota(gradOut.begin(), gradOut.end(), 1.f);
  const Tensor& gi = narrow.backward(x, kind.on(Tensor::fromVector({2, 2, 4}, gradOut)));
  REQUIRE(gi.sizes() == x.sizes());
  REQUIRE(gi.toVector() ==
          std::vector<float>{0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 9, 10, 11, 12, 13, 14, 15, 16});
  REQUIRE_THAT(nn::test::checkInputGradient(narrow, kind.on(nn::test::randomTensor({2, 3, 4}, 1))),
               nn::test::AgreesWithin(1e-3));
  checkAgainstTorch(kind, narrow, nn::test::kTorchNarrow1, nn::test::kTorchNarrow1GradInput);
}

NN_DEVICE_TEST_CASE("Narrow counts a negative offset from the end and a negative length back from it", "[Narrow]") {
  const Tensor x = counting(kind);
  // Offset -1 of a size-2 dimension is 1: the second sample, 12..23.
  nn::Narrow last(0, -1);
  REQUIRE(last.forward(x).sizes() == std::vector<int64_t>{1, 3, 4});
  REQUIRE(last.output.toVector()[0] == 12.f);
  REQUIRE(last.output.toVector()[11] == 23.f);
  // Offset -3 of size 4 is 1, and length -1 reaches the last index: 4 - 1 - 1 + 1 = 3 columns.
  nn::Narrow tail(2, -3, -1);
  REQUIRE(tail.forward(x).sizes() == std::vector<int64_t>{2, 3, 3});
  REQUIRE(tail.output.toVector() ==
          std::vector<float>{1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23});
  REQUIRE_THAT(nn::test::checkInputGradient(tail, kind.on(nn::test::randomTensor({2, 3, 4}, 2))),
               nn::test::AgreesWithin(1e-3));
  checkAgainstTorch(kind, tail, nn::test::kTorchNarrow2, nn::test::kTorchNarrow2GradInput);
  // Length -2 stops one before the end: offset 0, 4 - 0 - 2 + 1 = 3 columns.
  REQUIRE(nn::Narrow(2, 0, -2).forward(x).sizes() == std::vector<int64_t>{2, 3, 3});
}

NN_DEVICE_TEST_CASE("Select copies one index and drops its dimension; gradOutput goes back there", "[Select]") {
  nn::Select select(2, -1);
  REQUIRE(select.toString() == "nn.Select(dim=2, index=-1)");
  const Tensor x = counting(kind);
  // The last column: 3, 7, ..., 23.
  const Tensor& y = select.forward(x);
  REQUIRE(y.sizes() == std::vector<int64_t>{2, 3});
  REQUIRE(y.toVector() == std::vector<float>{3, 7, 11, 15, 19, 23});
  const Tensor& gi = select.backward(x, kind.on(Tensor::fromVector({2, 3}, {1, 2, 3, 4, 5, 6})));
  REQUIRE(gi.toVector() ==
          std::vector<float>{0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 6});
  REQUIRE_THAT(nn::test::checkInputGradient(select, kind.on(nn::test::randomTensor({2, 3, 4}, 3))),
               nn::test::AgreesWithin(1e-3));
  nn::Select sample(0, -1);
  checkAgainstTorch(kind, sample, nn::test::kTorchSelect0, nn::test::kTorchSelect0GradInput);
  // A vector's element is a tensor of no dimensions.
  nn::Select element(0, 2);
  REQUIRE(element.forward(kind.on(Tensor::fromVector({3}, {4, 5, 6}))).dim() == 0);
  REQUIRE(element.output.toVector() == std::vector<float>{6});
}

NN_DEVICE_TEST_CASE("Narrow and Select on another device give the host's results for strided input",
                    "[Narrow][Select]") {
  const Tensor host = nn::test::randomTensor({3, 5, 4}, 4);
  const Tensor hostGrad = nn::test::randomTensor({3, 2, 4}, 5);
  nn::Narrow reference(1, 2, 2);
  const Tensor y = reference.forward(host).clone();
  const Tensor gi = reference.backward(host, hostGrad).clone();
  nn::Narrow narrow(1, 2, 2);
  narrow.to(kind.compared());
  const Tensor strided = nn::test::stridedOn(host, kind.compared());
  REQUIRE_FALSE(strided.isContiguous());
  REQUIRE(narrow.forward(strided).toVector() == y.toVector());
  REQUIRE(narrow.backward(strided, nn::test::stridedOn(hostGrad, kind.compared())).toVector() == gi.toVector());

  nn::Select select(1, 3);
  const std::vector<float> selected = select.forward(host).toVector();
  select.to(kind.compared());
  REQUIRE(select.forward(strided).toVector() == selected);
}

NN_DEVICE_TEST_CASE("Narrow and Select save, load and clone with their settings", "[Narrow][Select]") {
  nn::Narrow narrow(2, -3, -1);
  checkCopies(kind, narrow);
  nn::Select select(1, -2);
  checkCopies(kind, select);
}

NN_DEVICE_TEST_CASE("Narrow and Select reject settings and inputs they cannot take, naming themselves",
                    "[Narrow][Select]") {
  REQUIRE_THROWS_WITH(nn::Narrow(1, 0, 0), Catch::Contains("nn.Narrow") && Catch::Contains("length other than 0"));
  REQUIRE_THROWS_WITH(nn::Narrow(-1, 0), Catch::Contains("nn.Narrow") && Catch::Contains("-1"));
  REQUIRE_THROWS_WITH(nn::Select(-1, 0), Catch::Contains("nn.Select") && Catch::Contains("-1"));
  const Tensor x = counting(kind);
  REQUIRE_THROWS_WITH(nn::Narrow(3, 0).forward(x), Catch::Contains("nn.Narrow(dim=3, offset=0, length=1)") &&
                                                       Catch::Contains("more than 3 dimensions") &&
                                                       Catch::Contains("[2, 3, 4]"));
  REQUIRE_THROWS_WITH(nn::Narrow(1, 2, 2).forward(x), Catch::Contains("nn.Narrow") && Catch::Contains("[2, 4)") &&
                                                          Catch::Contains("size 3 of dimension 1"));
  REQUIRE_THROWS_WITH(nn::Narrow(1, -4).forward(x), Catch::Contains("nn.Narrow") && Catch::Contains("[-1, 0)"));
  REQUIRE_THROWS_WITH(nn::Select(2, 4).forward(x), Catch::Contains("nn.Select(dim=2, index=4)") &&
                                                       Catch::Contains("size 4 of dimension 2"));
  REQUIRE_THROWS_WITH(nn::Select(0, -3).forward(x), Catch::Contains("nn.Select") && Catch::Contains("[-1, 0)"));
  nn::Narrow narrow(1, 1, 2);
  narrow.forward(x);
  REQUIRE_THROWS_WITH(narrow.backward(x, Tensor::zeros({2, 3, 4}, kind.device())),
                      Catch::Contains("nn.Narrow") && Catch::Contains("[2, 2, 4]") && Catch::Contains("[2, 3, 4]"));
  REQUIRE_THROWS_WITH(narrow.backward(x, Tensor::zeros({2, 2, 4}, kind.other())),
                      Catch::Contains("nn.Narrow") && Catch::Contains(kind.other().str()));
}

NN_DEVICE_TEST_CASE("Transpose swaps pairs of dimensions one after the other, and back for gradOutput",
                    "[Transpose]") {
  nn::Transpose transpose({{0, 2}, {1, 2}});
  REQUIRE(transpose.toString() == "nn.Transpose({0, 2}, {1, 2})");
  const Tensor x = counting(kind);
  // [2, 3, 4] -> swap 0, 2 -> [4, 3, 2] -> swap 1, 2 -> [4, 2, 3]: y[k][n][r] = x[n][r][k] = 12 n + 4 r + k.
  const Tensor& y = transpose.forward(x);
  REQUIRE(y.sizes() == std::vector<int64_t>{4, 2, 3});
  REQUIRE(y.isContiguous());
  REQUIRE(y.toVector() == std::vector<float>{0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21,
                                             2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23});
  // Back: gradInput[n][r][k] = gradOutput[k][n][r], so gradOutput = y gives x back.
  REQUIRE(transpose.backward(x, y.clone()).toVector() == x.toVector());
  REQUIRE_THAT(nn::test::checkInputGradient(transpose, kind.on(nn::test::randomTensor({2, 3, 4}, 6))),
               nn::test::AgreesWithin(1e-3));
  checkAgainstTorch(kind, transpose, nn::test::kTorchTranspose, nn::test::kTorchTransposeGradInput);
  checkCopies(kind, transpose);
  REQUIRE_THROWS_WITH(transpose.forward(Tensor::zeros({2, 3}, kind.device())),
                      Catch::Contains("nn.Transpose({0, 2}, {1, 2})") && Catch::Contains("more than 2 dimensions") &&
                          Catch::Contains("[2, 3]"));
  REQUIRE_THROWS_WITH(nn::Transpose(nn::TransposeOptions{{0, 1, 2}}), Catch::Contains("pairs"));
}

NN_DEVICE_TEST_CASE("SpatialZeroPadding adds zeros around each plane and gives gradOutput's middle back",
                    "[SpatialZeroPadding]") {
  nn::SpatialZeroPadding pad(1, 0, 2, 1);
  REQUIRE(pad.toString() == "nn.SpatialZeroPadding(l=1, r=0, t=2, b=1)");
  // One 2 x 2 plane [[1, 2], [3, 4]] in a batch of one: two rows above, one below, one column left.
  const Tensor x = kind.on(Tensor::fromVector({1, 1, 2, 2}, {1, 2, 3, 4}));
  const Tensor& y = pad.forward(x);
  REQUIRE(y.sizes() == std::vector<int64_t>{1, 1, 5, 3});
  REQUIRE(y.toVector() == std::vector<float>{0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 3, 4, 0, 0, 0});
  std::vector<float> gradOut(15);
  std::iota(gradOut.begin(), gradOut.end(), 1.f);
  // gradOutput 1..15 as 5 x 3: the input's cells are (2, 1), (2, 2), (3, 1), (3, 2): 8, 9, 11, 12.
  REQUIRE(pad.backward(x, kind.on(Tensor::fromVector({1, 1, 5, 3}, gradOut))).toVector() ==
          std::vector<float>{8, 9, 11, 12});
  REQUIRE_THAT(nn::test::checkInputGradient(pad, kind.on(nn::test::randomTensor({2, 3, 4, 5}, 7))),
               nn::test::AgreesWithin(1e-3));
  nn::SpatialZeroPadding padded(1, 2, 0, 1);
  checkAgainstTorch(kind, padded, nn::test::kTorchPad, nn::test::kTorchPadGradInput);
  checkCopies(kind, padded);
}

NN_DEVICE_TEST_CASE("SpatialZeroPadding crops where a count is negative", "[SpatialZeroPadding]") {
  const Tensor x = counting(kind);  // [C, H, W] = [2, 3, 4]
  // Left -1 and bottom -1 crop a column and a row; right 1 and top 2 add zeros.
  nn::SpatialZeroPadding crop(-1, 1, 2, -1);
  const Tensor& y = crop.forward(x);
  REQUIRE(y.sizes() == std::vector<int64_t>{2, 4, 4});
  REQUIRE(y.toVector() == std::vector<float>{0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 0, 5, 6, 7, 0,
                                             0, 0, 0, 0, 0, 0, 0, 0, 13, 14, 15, 0, 17, 18, 19, 0});
  REQUIRE_THAT(nn::test::checkInputGradient(crop, kind.on(nn::test::randomTensor({2, 3, 4}, 8))),
               nn::test::AgreesWithin(1e-3));
  checkAgainstTorch(kind, crop, nn::test::kTorchCrop, nn::test::kTorchCropGradInput);
  // Cropping every row leaves zeros only; an output of no rows is an error.
  nn::SpatialZeroPadding away(0, 0, 1, -3);
  REQUIRE(away.forward(x).toVector() == std::vector<float>(8, 0.f));
  REQUIRE(away.backward(x, Tensor::zeros({2, 1, 4}, kind.device()).fill_(1)).toVector() == std::vector<float>(24, 0.f));
  REQUIRE_THROWS_WITH(nn::SpatialZeroPadding(0, 0, -2, -1).forward(x),
                      Catch::Contains("nn.SpatialZeroPadding(l=0, r=0, t=-2, b=-1)") && Catch::Contains("0 x 4") &&
                          Catch::Contains("[2, 3, 4]"));
  REQUIRE_THROWS_WITH(crop.forward(Tensor::zeros({3, 4}, kind.device())),
                      Catch::Contains("[C, H, W] or [N, C, H, W]") && Catch::Contains("[3, 4]"));
  crop.forward(x);
  REQUIRE_THROWS_WITH(crop.backward(x, Tensor::zeros({2, 3, 4}, kind.device())),
                      Catch::Contains("nn.SpatialZeroPadding") && Catch::Contains("[2, 4, 4]"));
}

NN_DEVICE_TEST_CASE("Transpose and SpatialZeroPadding on another device give the host's results for strided input",
                    "[Transpose][SpatialZeroPadding]") {
  const Tensor host = nn::test::randomTensor({2, 3, 4, 5}, 9);
  const Tensor strided = nn::test::stridedOn(host, kind.compared());
  nn::Transpose transpose({{1, 3}});
  nn::SpatialZeroPadding pad(2, -1, 1, 0);
  for (nn::Module* module : {static_cast<nn::Module*>(&transpose), static_cast<nn::Module*>(&pad)}) {
    CAPTURE(module->toString());
    const Tensor y = module->forward(host).clone();
    const Tensor hostGrad = nn::test::randomTensor(y.sizes(), 10);
    const std::vector<float> gi = module->backward(host, hostGrad).toVector();
    module->to(kind.compared());
    REQUIRE(module->forward(strided).toVector() == y.toVector());
    REQUIRE(module->backward(strided, nn::test::stridedOn(hostGrad, kind.compared())).toVector() == gi);
  }
}
