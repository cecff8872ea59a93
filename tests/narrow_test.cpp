// nn::Narrow and nn::Select (Torch7's nn.Narrow, nn.Select, from 0): reference values by hand
// and from PyTorch, finite differences, negative offsets, lengths and indices, strided input on
// another device, saving, cloning and errors; on CPU devices and, where found, CUDA devices.
#include "nn/Narrow.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>

#include "nn/Select.h"
#include "tests/ActivationChecks.h"
#include "tests/DeviceTest.h"
#include "tests/GradCheck.h"
#include "tests/SliceConstantReference.h"

using nn::Tensor;

namespace {

// 0, 1, ..., 23 as [2, 3, 4].
Tensor counting(const nn::test::DeviceKind& kind) {
  std::vector<float> values(24);
  std::iota(values.begin(), values.end(), 0.f);
  return kind.on(Tensor::fromVector({2, 3, 4}, values));
}

// The inputs and gradOutputs of tests/make_slice_constant_reference.py.
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
