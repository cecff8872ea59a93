// nn::SpatialMaxPooling and nn::SpatialAveragePooling: window math; reference values, gradient
// checks, errors and a PyTorch cross-check on every device type; the modules on another device
// compared bit for bit with those on the host on odd sizes, ceil mode and strided input. Every
// kernel computes each value with the nn/math/Pooling.h formulas, from the same floats in the
// same order on every device: the results are exact or equal bit for bit wherever the CPU's are.
#include "nn/math/Pooling.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>

#include "nn/modules/SpatialAveragePooling.h"
#include "nn/modules/SpatialMaxPooling.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

// values[i] = f(i) over the row-major elements of a tensor of the given sizes.
Tensor formula(const std::vector<int64_t>& sizes, const std::function<double(int64_t)>& f) {
  std::vector<float> values(static_cast<size_t>(nn::product(sizes)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(f(static_cast<int64_t>(i)));
  return Tensor::fromVector(sizes, values);
}

// Distinct values 0.1 apart in a scrambled order (37 is prime to the element counts used), so
// that a finite-difference step of 0.01 never changes which cell wins a max-pooling window.
Tensor distinct(const std::vector<int64_t>& sizes) {
  const int64_t n = nn::product(sizes);
  return formula(sizes, [n](int64_t i) { return 0.1 * static_cast<double>((i * 37) % n) - 0.05 * n; });
}

}  // namespace

TEST_CASE("Pooling output sizes follow floor and ceil mode", "[SpatialMaxPooling][SpatialAveragePooling]") {
  // 28x28, 2x2 stride 2: 26 / 2 + 1 = 14 either way.
  REQUIRE(nn::math::poolOutputSize(28, 2, 2, 0, false) == 14);
  REQUIRE(nn::math::poolOutputSize(28, 2, 2, 0, true) == 14);
  // 6, kernel 3, stride 2, pad 1: (6 + 2 - 3) / 2 = 2.5, so 3 windows in floor mode, 4 in ceil.
  REQUIRE(nn::math::poolOutputSize(6, 3, 2, 1, false) == 3);
  REQUIRE(nn::math::poolOutputSize(6, 3, 2, 1, true) == 4);
  // 7, kernel 2, stride 2, pad 1: ceil((7 + 2 - 2) / 2) + 1 = 5, but window 4 would start at
  // 4 * 2 - 1 = 7, past the input, so it is dropped: 4 windows, as in floor mode.
  REQUIRE(nn::math::poolOutputSize(7, 2, 2, 1, true) == 4);
  REQUIRE(nn::math::poolOutputSize(7, 2, 2, 1, false) == 4);
}

NN_DEVICE_TEST_CASE("SpatialMaxPooling forward and backward match hand-computed values", "[SpatialMaxPooling]") {
  nn::SpatialMaxPooling pool(2, 2);
  REQUIRE(pool.toString() == "nn.SpatialMaxPooling(2x2, 2,2)");
  const Tensor x = kind.on(Tensor::fromVector({1, 4, 4}, {1, 5, 2, 0,  //
                                                          3, 4, 8, 8,  //
                                                          9, 0, 1, 2,  //
                                                          9, 7, 3, 6}));
  // Windows {1, 5, 3, 4}, {2, 0, 8, 8}, {9, 0, 9, 7}, {1, 2, 3, 6}. Of equal maxima the first
  // in row-major order wins: the 8 at (1, 2) = index 6 and the 9 at (2, 0) = index 8.
  REQUIRE(nn::test::maxAbsDiff(pool.forward(x), {5, 8, 9, 6}) == 0);
  REQUIRE(nn::test::maxAbsDiff(pool.indices, {1, 6, 8, 15}) == 0);
  // Each gradient goes to its window's winner.
  pool.backward(x, kind.on(Tensor::fromVector({1, 2, 2}, {1, 2, 3, 4})));
  REQUIRE(nn::test::maxAbsDiff(pool.gradInput, {0, 1, 0, 0, 0, 0, 2, 0, 3, 0, 0, 0, 0, 0, 0, 4}) == 0);

  // 3x3 windows, stride 2, padding 1: (4 + 2 - 3) / 2 + 1 = 2 windows each way, covering rows
  // (and columns) 0..1 and 1..3. Maxima: {1, 5, 3, 4} -> 5 (1); {5, 2, 0, 4, 8, 8} -> 8 (6);
  // {3, 4, 9, 0, 9, 7} -> 9 (8); {4, 8, 8, 0, 1, 2, 7, 3, 6} -> 8 (6). Overlapping windows that
  // share a winner add their gradients: index 6 gets 2 + 4.
  nn::SpatialMaxPooling padded(3, 3, 2, 2, 1, 1);
  REQUIRE(padded.toString() == "nn.SpatialMaxPooling(3x3, 2,2, 1,1)");
  REQUIRE(nn::test::maxAbsDiff(padded.forward(x), {5, 8, 9, 8}) == 0);
  REQUIRE(nn::test::maxAbsDiff(padded.indices, {1, 6, 8, 6}) == 0);
  padded.backward(x, kind.on(Tensor::fromVector({1, 2, 2}, {1, 2, 3, 4})));
  REQUIRE(nn::test::maxAbsDiff(padded.gradInput, {0, 1, 0, 0, 0, 0, 6, 0, 3, 0, 0, 0, 0, 0, 0, 0}) == 0);
}

NN_DEVICE_TEST_CASE("SpatialMaxPooling never picks padding and propagates NaN", "[SpatialMaxPooling]") {
  // All inputs -5: a padding cell taken as 0 would win; it must not.
  nn::SpatialMaxPooling pool(3, 3, 2, 2, 1, 1);
  REQUIRE(nn::test::maxAbsDiff(pool.forward(Tensor::full({1, 3, 3}, -5.f, kind.device())), {-5, -5, -5, -5}) == 0);
  // Ceil mode: 3x3 input, 2x2 windows, stride 2 gives ceil(1 / 2) + 1 = 2 windows per axis;
  // the last ones hold only the cells that exist: {1, 2, 4, 5} -> 5, {3, 6} -> 6, {7, 8} -> 8, {9}.
  nn::SpatialMaxPooling ceil(2, 2);
  ceil.ceil();
  REQUIRE(ceil.ceilMode());
  const Tensor x = kind.on(Tensor::fromVector({1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  REQUIRE(nn::test::maxAbsDiff(ceil.forward(x), {5, 6, 8, 9}) == 0);
  REQUIRE(nn::test::maxAbsDiff(ceil.floor().forward(x), {5}) == 0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor withNan = kind.on(Tensor::fromVector({1, 2, 2}, {1, nan, 3, 2}));
  REQUIRE(std::isnan(ceil.forward(withNan).toVector()[0]));
}

namespace {

// Max pooling with k x k windows moved by k, no padding, written as plainly as possible: the
// reference for the module's path for windows that tile the input. Fills the maxima, their
// plane indices and the gradient routed back from `gradOutput`.
struct PlainMaxPool {
  std::vector<float> output, indices, gradInput;
};
PlainMaxPool plainMaxPool(const Tensor& input, const Tensor& gradOutput, int64_t k) {
  const std::vector<float> x = input.toVector(), g = gradOutput.toVector();
  const int64_t planes = input.size(0) * input.size(1), height = input.size(2), width = input.size(3);
  const int64_t outH = height / k, outW = width / k;
  PlainMaxPool r;
  r.gradInput.assign(x.size(), 0.f);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < outH; ++oy)
      for (int64_t ox = 0; ox < outW; ++ox) {
        int64_t best = oy * k * width + ox * k;
        for (int64_t y = oy * k; y < oy * k + k; ++y)
          for (int64_t xx = ox * k; xx < ox * k + k; ++xx) {
            const float v = x[p * height * width + y * width + xx];
            if (v > x[p * height * width + best] || std::isnan(v)) best = y * width + xx;
          }
        r.output.push_back(x[p * height * width + best]);
        r.indices.push_back(static_cast<float>(best));
        r.gradInput[p * height * width + best] += g[(p * outH + oy) * outW + ox];
      }
  return r;
}

// Exact equality, NaN equal to NaN.
bool sameValues(const Tensor& a, const std::vector<float>& b) {
  const std::vector<float> v = a.toVector();
  if (v.size() != b.size()) return false;
  for (size_t i = 0; i < v.size(); ++i)
    if (!(v[i] == b[i] || (std::isnan(v[i]) && std::isnan(b[i])))) return false;
  return true;
}

}  // namespace

NN_DEVICE_TEST_CASE("SpatialMaxPooling's path for windows that tile the input matches a plain scan",
                    "[SpatialMaxPooling]") {
  // 27 x 26 planes under 2x2 windows: 13 x 13 windows, a row of input cells below them that no
  // window covers, and rows of 13 windows taken in blocks of 8 and 4 and one alone. Values
  // i * 7 mod 5 repeat within most windows, so ties decide the winners; a few NaN must win
  // their windows. A 3x3 kernel takes the path without the 2x2 blocks.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const int64_t k : {2, 3}) {
    Tensor x = formula({2, 3, 27, 26}, [](int64_t i) { return static_cast<double>((i * 7) % 5); });
    for (const int64_t i : {0, 31, 57, 58, 700, 2005}) x.data()[i] = nan;
    const Tensor xOn = kind.on(x);
    const int64_t outH = 27 / k, outW = 26 / k;
    nn::SpatialMaxPooling pool(k, k);
    const Tensor g1 = kind.on(nn::test::randomTensor({2, 3, outH, outW}, 91));
    const Tensor g2 = kind.on(nn::test::randomTensor({2, 3, outH, outW}, 92));
    const PlainMaxPool expected1 = plainMaxPool(x, g1, k), expected2 = plainMaxPool(x, g2, k);
    REQUIRE(sameValues(pool.forward(xOn), expected1.output));
    REQUIRE(sameValues(pool.indices, expected1.indices));
    REQUIRE(sameValues(pool.backward(xOn, g1), expected1.gradInput));
    // A second backward writes every cell again, leaving nothing of the first.
    REQUIRE(sameValues(pool.backward(xOn, g2), expected2.gradInput));
  }
}

NN_DEVICE_TEST_CASE("SpatialAveragePooling forward and backward match hand-computed values",
                    "[SpatialAveragePooling]") {
  // x = [[1, 2, 3], [4, 5, 6], [7, 8, 9]], 2x2 windows, stride 2, padding 1: (3 + 2 - 2) / 2 + 1
  // = 2 windows per axis, covering rows (and columns) -1..0 and 1..2. Counting padding, each
  // divides by 4: 1 / 4, (2 + 3) / 4, (4 + 7) / 4, (5 + 6 + 8 + 9) / 4.
  nn::SpatialAveragePooling pool(2, 2, 2, 2, 1, 1);
  REQUIRE(pool.toString() == "nn.SpatialAveragePooling(2x2, 2,2, 1,1)");
  REQUIRE(pool.countIncludePad());
  const Tensor x = kind.on(Tensor::fromVector({1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  REQUIRE(nn::test::maxAbsDiff(pool.forward(x), {0.25f, 1.25f, 2.75f, 7}) == 0);
  // Each gradient spreads evenly, divided by the same 4, over the window's input cells.
  pool.backward(x, kind.on(Tensor::fromVector({1, 2, 2}, {4, 8, 12, 16})));
  REQUIRE(nn::test::maxAbsDiff(pool.gradInput, {1, 2, 2, 3, 4, 4, 3, 4, 4}) == 0);

  // Without the padding: divide by the input cells only: 1 / 1, 5 / 2, 11 / 2, 28 / 4.
  pool.setCountExcludePad();
  REQUIRE_FALSE(pool.countIncludePad());
  REQUIRE(nn::test::maxAbsDiff(pool.forward(x), {1, 2.5f, 5.5f, 7}) == 0);
  pool.backward(x, kind.on(Tensor::fromVector({1, 2, 2}, {4, 8, 12, 16})));
  REQUIRE(nn::test::maxAbsDiff(pool.gradInput, {4, 4, 4, 6, 4, 4, 6, 4, 4}) == 0);
  pool.setCountIncludePad();
  REQUIRE(nn::test::maxAbsDiff(pool.forward(x), {0.25f, 1.25f, 2.75f, 7}) == 0);

  // Ceil mode without padding: windows at rows (and columns) 0..1 and 2..3; the second exists
  // only in row 2, and the divisor counts only cells inside the input (there is no padding):
  // (1 + 2 + 4 + 5) / 4 = 3, (3 + 6) / 2, (7 + 8) / 2, 9 / 1. Floor mode keeps the first only.
  nn::SpatialAveragePooling ceil(2, 2, 2, 2);
  ceil.ceil();
  REQUIRE(nn::test::maxAbsDiff(ceil.forward(x), {3, 4.5f, 7.5f, 9}) == 0);
  REQUIRE(nn::test::maxAbsDiff(ceil.floor().forward(x), {3}) == 0);
}

NN_DEVICE_TEST_CASE("SpatialMaxPooling gradients agree with finite differences", "[SpatialMaxPooling]") {
  const Tensor x = kind.on(distinct({2, 2, 5, 6}));
  nn::SpatialMaxPooling pool(2, 2);
  REQUIRE_THAT(nn::test::checkInputGradient(pool, x), nn::test::AgreesWithin(1e-3));
  nn::SpatialMaxPooling padded(3, 2, 2, 1, 1, 1);
  REQUIRE_THAT(nn::test::checkInputGradient(padded, x), nn::test::AgreesWithin(1e-3));
  padded.ceil();
  REQUIRE_THAT(nn::test::checkInputGradient(padded, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkInputGradient(padded, kind.on(distinct({3, 7, 5}))), nn::test::AgreesWithin(1e-3));
}

NN_DEVICE_TEST_CASE("SpatialAveragePooling gradients agree with finite differences", "[SpatialAveragePooling]") {
  const Tensor x = kind.on(nn::test::randomTensor({2, 2, 5, 6}, 7));
  nn::SpatialAveragePooling pool(3, 2, 2, 1, 1, 1);
  REQUIRE_THAT(nn::test::checkInputGradient(pool, x), nn::test::AgreesWithin(1e-3));
  pool.ceil().setCountExcludePad();
  REQUIRE_THAT(nn::test::checkInputGradient(pool, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkInputGradient(pool, kind.on(nn::test::randomTensor({3, 7, 5}, 8))),
               nn::test::AgreesWithin(1e-3));
}

NN_DEVICE_TEST_CASE("Pooling rejects bad input with a message naming the module",
                    "[SpatialMaxPooling][SpatialAveragePooling]") {
  nn::SpatialMaxPooling maxPool(3, 3, 2, 2);
  const std::string maxName = "nn.SpatialMaxPooling(3x3, 2,2)";
  REQUIRE_THROWS_WITH(maxPool.forward(Tensor::zeros({5, 5}, kind.device())),
                      Catch::Contains(maxName) && Catch::Contains("[5, 5]"));
  REQUIRE_THROWS_WITH(maxPool.forward(Tensor::zeros({1, 1, 1, 5, 5}, kind.device())),
                      Catch::Contains(maxName) && Catch::Contains("[1, 1, 1, 5, 5]"));
  REQUIRE_THROWS_WITH(maxPool.forward(Tensor::zeros({2, 2, 5}, kind.device())),
                      Catch::Contains(maxName) && Catch::Contains("[2, 2, 5]") && Catch::Contains("height at least 3"));
  const Tensor x = Tensor::zeros({2, 3, 7, 5}, kind.device());
  maxPool.forward(x);
  REQUIRE(maxPool.output.sizes() == std::vector<int64_t>{2, 3, 3, 2});
  REQUIRE_THROWS_WITH(maxPool.backward(x, Tensor::zeros({2, 3, 2, 3}, kind.device())),
                      Catch::Contains(maxName) && Catch::Contains("[2, 3, 2, 3]") && Catch::Contains("[2, 3, 3, 2]"));
  REQUIRE_THROWS_WITH(nn::SpatialMaxPooling(3, 3, 1, 1, 2, 1),
                      Catch::Contains("nn.SpatialMaxPooling") && Catch::Contains("half the kernel"));
  // A stride of 0 means the kernel's (Torch7's default); a negative one is refused.
  REQUIRE(nn::SpatialMaxPooling(3, 2, 0, 0).toString() == "nn.SpatialMaxPooling(3x2, 3,2)");
  REQUIRE_THROWS_WITH(nn::SpatialMaxPooling(2, 2, -1, 2),
                      Catch::Contains("nn.SpatialMaxPooling") && Catch::Contains("stride -1,2"));

  nn::SpatialAveragePooling avgPool(2, 4);
  const std::string avgName = "nn.SpatialAveragePooling(2x4, 1,1)";
  REQUIRE_THROWS_WITH(avgPool.forward(Tensor::zeros({6}, kind.device())),
                      Catch::Contains(avgName) && Catch::Contains("[6]"));
  REQUIRE_THROWS_WITH(avgPool.forward(Tensor::zeros({3, 3, 8}, kind.device())),
                      Catch::Contains(avgName) && Catch::Contains("[3, 3, 8]") &&
                          Catch::Contains("height at least 4 and width at least 2"));
  const Tensor y = Tensor::zeros({3, 4, 2}, kind.device());
  REQUIRE(avgPool.forward(y).sizes() == std::vector<int64_t>{3, 1, 1});
  REQUIRE_THROWS_WITH(avgPool.backward(y, Tensor::zeros({3, 1}, kind.device())),
                      Catch::Contains(avgName) && Catch::Contains("[3, 1]") && Catch::Contains("[3, 1, 1]"));
  REQUIRE_THROWS_WITH(nn::SpatialAveragePooling(2, 2, 1, 1, 0, 2),
                      Catch::Contains("nn.SpatialAveragePooling") && Catch::Contains("half the kernel"));
  REQUIRE_THROWS_WITH(nn::SpatialAveragePooling(2, 2, 0, 1), Catch::Contains("nn.SpatialAveragePooling"));
}

NN_DEVICE_TEST_CASE("SpatialMaxPooling backward needs a forward on the same input", "[SpatialMaxPooling]") {
  nn::SpatialMaxPooling pool(2, 2);
  const Tensor x = Tensor::zeros({2, 1, 4, 4}, kind.device());
  const Tensor g = Tensor::zeros({2, 1, 2, 2}, kind.device());
  REQUIRE_THROWS_WITH(pool.backward(x, g), Catch::Contains("forward"));
  // A 5x5 input pools to 2x2 as well, but its winners can lie beyond a 4x4 plane.
  pool.forward(kind.on(formula({2, 1, 5, 5}, [](int64_t i) { return static_cast<double>(i % 25); })));
  REQUIRE_THROWS_WITH(pool.backward(x, g), Catch::Contains("forward"));
  pool.forward(x);
  pool.clearState();
  REQUIRE_THROWS_WITH(pool.backward(x, g), Catch::Contains("forward"));
}

NN_DEVICE_TEST_CASE("Pooling gives the same results for non-contiguous input",
                    "[SpatialMaxPooling][SpatialAveragePooling]") {
  const Tensor stored = kind.on(distinct({2, 3, 7, 5}));
  const Tensor strided = stored.transpose(2, 3);  // [2, 3, 5, 7]
  REQUIRE_FALSE(strided.isContiguous());
  const Tensor copy = strided.contiguous();
  const Tensor g = kind.on(nn::test::randomTensor({2, 3, 4, 3}, 61)).transpose(2, 3);  // [2, 3, 3, 4]
  REQUIRE_FALSE(g.isContiguous());

  nn::SpatialMaxPooling maxPool(3, 3, 2, 2, 1, 1);
  nn::SpatialAveragePooling avgPool(3, 3, 2, 2, 1, 1);
  for (nn::Module* pool : {static_cast<nn::Module*>(&maxPool), static_cast<nn::Module*>(&avgPool)}) {
    const Tensor y = pool->forward(copy).clone();
    const Tensor gi = pool->backward(copy, g.contiguous()).clone();
    REQUIRE(nn::test::maxAbsDiff(pool->forward(strided), y) == 0);
    REQUIRE(nn::test::maxAbsDiff(pool->backward(strided, g), gi) == 0);
  }
}

NN_DEVICE_TEST_CASE("Pooling clones keep their mode and are independent",
                    "[SpatialMaxPooling][SpatialAveragePooling]") {
  const Tensor x = kind.on(nn::test::randomTensor({2, 3, 6, 7}, 71));
  auto maxPool = std::make_shared<nn::SpatialMaxPooling>(3, 3, 2, 2, 1, 1);
  maxPool->ceil();
  auto avgPool = std::make_shared<nn::SpatialAveragePooling>(3, 3, 2, 2, 1, 1);
  avgPool->ceil().setCountExcludePad();
  for (const nn::ModulePtr& pool : {nn::ModulePtr(maxPool), nn::ModulePtr(avgPool)}) {
    const Tensor y = pool->forward(x).clone();
    REQUIRE(y.sizes() == std::vector<int64_t>{2, 3, 4, 4});  // ceil mode: 4 rows, not 3
    const nn::ModulePtr copy = pool->clone();
    REQUIRE(copy->typeName() == pool->typeName());
    REQUIRE(copy->toString() == pool->toString());
    REQUIRE(nn::test::maxAbsDiff(copy->forward(x), y) == 0);
  }
  // Changing the clone's mode leaves the original alone.
  auto maxCopy = std::dynamic_pointer_cast<nn::SpatialMaxPooling>(maxPool->clone());
  auto avgCopy = std::dynamic_pointer_cast<nn::SpatialAveragePooling>(avgPool->clone());
  REQUIRE(maxCopy != nullptr);
  REQUIRE(avgCopy != nullptr);
  REQUIRE(maxCopy->ceilMode());
  REQUIRE_FALSE(avgCopy->countIncludePad());
  maxCopy->floor();
  avgCopy->floor().setCountIncludePad();
  REQUIRE(maxCopy->forward(x).sizes() == std::vector<int64_t>{2, 3, 3, 4});
  REQUIRE(maxPool->forward(x).sizes() == std::vector<int64_t>{2, 3, 4, 4});
  REQUIRE(avgPool->ceilMode());
  REQUIRE_FALSE(avgPool->countIncludePad());
}

NN_DEVICE_TEST_CASE("Pooling strides default as in Torch7", "[SpatialMaxPooling][SpatialAveragePooling]") {
  // SpatialMaxPooling's stride defaults to the kernel size, SpatialAveragePooling's to 1.
  REQUIRE(nn::SpatialMaxPooling(3, 2).toString() == "nn.SpatialMaxPooling(3x2, 3,2)");
  REQUIRE(nn::SpatialMaxPooling(3, 2).forward(Tensor::zeros({1, 6, 9}, kind.device())).sizes() ==
          std::vector<int64_t>{1, 3, 3});
  REQUIRE(nn::SpatialAveragePooling(2, 2).toString() == "nn.SpatialAveragePooling(2x2, 1,1)");
  REQUIRE(nn::SpatialAveragePooling(3, 2).forward(Tensor::zeros({1, 6, 9}, kind.device())).sizes() ==
          std::vector<int64_t>{1, 5, 7});
}

NN_DEVICE_TEST_CASE("Pooling allocates nothing in a repeated training step",
                    "[SpatialMaxPooling][SpatialAveragePooling]") {
  const Tensor x = kind.on(nn::test::randomTensor({4, 6, 12, 12}, 81));
  const Tensor g = kind.on(nn::test::randomTensor({4, 6, 6, 6}, 82));
  nn::SpatialMaxPooling maxPool(2, 2);
  nn::SpatialAveragePooling avgPool(2, 2, 2, 2);
  for (nn::Module* pool : {static_cast<nn::Module*>(&maxPool), static_cast<nn::Module*>(&avgPool)}) {
    pool->forward(x);
    pool->backward(x, g);
    const int64_t before = nn::storageAllocationCount();
    pool->forward(x);
    pool->backward(x, g);
    REQUIRE(nn::storageAllocationCount() == before);
  }
}

namespace {

// Produced once by tests/reference/make_spatial_reference.py with PyTorch 1.13: F.max_pool2d and
// F.avg_pool2d with kernel 3, stride 2, padding 1 (ceil_mode and count_include_pad as named)
// on x = sin(0.37 i) of size [2, 1, 6, 7], then backward of gradOutput = cos(0.11 i).
// kMaxFloorOutput: [2, 1, 3, 4]
const std::vector<float> kMaxFloorOutput = {
    0.52404433f, 0.89569867f, 0.99588084f, 0.96127522f, 0.99647564f, 0.95937485f, 0.67930466f, 0.89870811f,
    0.99647564f, 0.99702412f, 0.99702412f, 0.78825206f, 0.16717462f, 0.38059911f, 0.90460157f, 0.99752629f,
    0.95544052f, 0.78404033f, 0.90460157f, 0.99752629f, 0.90748537f, 0.99798214f, 0.95340675f, 0.50063646f,
};
// kMaxFloorGradInput: [2, 1, 6, 7]
const std::vector<float> kMaxFloorGradInput = {
    0.f,          0.f,          0.f,         0.99395609f,  0.97589743f, 0.94604236f, 0.f,          1.f,
    0.f,          0.f,          0.f,         0.f,          0.f,         0.f,         0.f,          0.f,
    0.f,          0.f,          0.f,         0.78999221f,  0.71791065f, 1.5419028f,  0.85252452f,  0.f,
    0.f,          0.f,          0.f,         0.f,          0.f,         0.f,         0.f,          0.f,
    0.f,          0.f,          0.f,         0.f,          0.f,         0.f,         1.002286f,    0.f,
    0.35301939f,  0.f,          0.24817546f, 0.f,          0.f,         0.f,         0.f,          0.f,
    0.f,          0.f,          0.f,         0.f,          0.14033161f, 0.f,         -0.36708742f, -0.57530981f,
    -0.18807684f, -0.29475936f, 0.f,         0.f,          0.f,         0.f,         0.f,          0.f,
    0.f,          0.f,          0.f,         0.f,          0.f,         0.f,         0.f,          -0.5885011f,
    -0.67369962f, -0.75075459f, 0.f,         -0.81873459f, 0.f,         0.f,         0.f,          0.f,
    0.f,          0.f,          0.f,         0.f,
};

// kMaxCeilOutput: [2, 1, 4, 4]
const std::vector<float> kMaxCeilOutput = {
    0.52404433f, 0.89569867f, 0.99588084f, 0.96127522f, 0.99647564f,  0.95937485f,  0.67930466f,  0.89870811f,
    0.99647564f, 0.99702412f, 0.99702412f, 0.78825206f, 0.68428987f,  0.99702412f,  0.99702412f,  0.78825206f,
    0.16717462f, 0.38059911f, 0.90460157f, 0.99752629f, 0.95544052f,  0.78404033f,  0.90460157f,  0.99752629f,
    0.90748537f, 0.99798214f, 0.95340675f, 0.50063646f, -0.21399817f, -0.55275458f, -0.88003057f, -0.64873922f,
};
// kMaxCeilGradInput: [2, 1, 6, 7]
const std::vector<float> kMaxCeilGradInput = {
    0.f,         0.f,          0.f,          0.99395609f,  0.97589743f,  0.94604236f, 0.f,          1.f,
    0.f,         0.f,          0.f,          0.f,          0.f,          0.f,         0.f,          0.f,
    0.f,         0.f,          0.f,          0.78999221f,  0.71791065f,  1.5419028f,  0.85252452f,  0.f,
    0.f,         0.f,          0.f,          0.f,          0.f,          0.f,         0.f,          0.f,
    0.f,         0.f,          0.f,          0.f,          0.24817546f,  0.f,         1.173409f,    0.f,
    0.27389848f, 0.f,          -0.18807684f, 0.f,          0.f,          0.f,         0.f,          0.f,
    0.f,         0.f,          0.f,          0.f,          -0.29475936f, 0.f,         -1.1486335f,  -1.3149235f,
    -0.5885011f, -0.67369962f, 0.f,          0.f,          0.f,          0.f,         0.f,          0.f,
    0.f,         0.f,          0.f,          0.f,          0.f,          0.f,         0.f,          -0.87681788f,
    -0.9243024f, -0.96061409f, 0.f,          -0.98531407f, 0.f,          -0.9981038f, -0.99882859f, 0.f,
    0.f,         0.f,          -0.98747975f, -0.96419448f,
};

// kAvgFloorOutput: [2, 1, 3, 4]
const std::vector<float> kAvgFloorOutput = {
    0.1184729f,   0.1550075f,   0.062135644f, -0.022281131f, 0.12206706f,  0.079535209f, -0.082380094f, -0.12332731f,
    0.13830622f,  0.22266334f,  0.14869425f,  0.026200686f,  -0.11500242f, -0.16580081f, -0.088315673f, 0.0024319093f,
    -0.13594662f, -0.11340208f, 0.046419065f, 0.10627397f,   -0.12517463f, -0.22343117f, -0.17458218f,  -0.051140446f,
};
// kAvgFloorGradInput: [2, 1, 6, 7]
const std::vector<float> kAvgFloorGradInput = {
    0.11111111f,   0.22155067f,   0.11043957f,   0.21887261f,   0.10843305f,   0.21354887f,   0.10511582f,
    0.21163908f,   0.4168036f,    0.20516452f,   0.40137446f,   0.19620997f,   0.38109365f,   0.18488367f,
    0.10052796f,   0.19525291f,   0.094724946f,  0.18250185f,   0.087776914f,  0.16754477f,   0.079767853f,
    0.17132252f,   0.32701302f,   0.15569049f,   0.29386696f,   0.13817649f,   0.25716871f,   0.11899222f,
    0.070794567f,  0.13176011f,   0.060965538f,  0.11136511f,   0.050399568f,  0.089623943f,  0.039224375f,
    0.070794567f,  0.13176011f,   0.060965538f,  0.11136511f,   0.050399568f,  0.089623943f,  0.039224375f,
    0.027575051f,  0.043167453f,  0.015592401f,  0.019013675f,  0.0034212733f, -0.005369937f, -0.0087912101f,
    0.0066776257f, -0.010481011f, -0.017158639f, -0.057946131f, -0.040787492f, -0.1047108f,   -0.063923314f,
    -0.020897426f, -0.053648464f, -0.032751039f, -0.076959804f, -0.044208765f, -0.099340871f, -0.055132102f,
    -0.086286433f, -0.19389299f,  -0.10760655f,  -0.2352325f,   -0.12762594f,  -0.27372855f,  -0.14610261f,
    -0.065389007f, -0.14024451f,  -0.074855514f, -0.15827268f,  -0.083417177f, -0.17438769f,  -0.090970509f,
    -0.065389007f, -0.14024451f,  -0.074855514f, -0.15827268f,  -0.083417177f, -0.17438769f,  -0.090970509f,
};

// kAvgCeilOutput: [2, 1, 4, 4]
const std::vector<float> kAvgCeilOutput = {
    0.1184729f,   0.1550075f,   0.062135644f,  -0.022281131f, 0.12206706f,  0.079535209f, -0.082380094f, -0.12332731f,
    0.13830622f,  0.22266334f,  0.14869425f,   0.026200686f,  0.17642973f,  0.43049827f,  0.45711768f,   0.21677335f,
    -0.11500242f, -0.16580081f, -0.088315673f, 0.0024319093f, -0.13594662f, -0.11340208f, 0.046419065f,  0.10627397f,
    -0.12517463f, -0.22343117f, -0.17458218f,  -0.051140446f, -0.12779212f, -0.38992643f, -0.47372505f,  -0.25479496f,
};
// kAvgCeilGradInput: [2, 1, 6, 7]
const std::vector<float> kAvgCeilGradInput = {
    0.11111111f,   0.22155067f,   0.11043957f,   0.21887261f,   0.10843305f,   0.21354887f,   0.10511582f,
    0.21163908f,   0.4168036f,    0.20516452f,   0.40137446f,   0.19620997f,   0.38109365f,   0.18488367f,
    0.10052796f,   0.19525291f,   0.094724946f,  0.18250185f,   0.087776914f,  0.16754477f,   0.079767853f,
    0.17132252f,   0.32701302f,   0.15569049f,   0.29386696f,   0.13817649f,   0.25716871f,   0.11899222f,
    0.070794567f,  0.13176011f,   0.060965538f,  0.11136511f,   0.050399568f,  0.089623943f,  0.039224375f,
    0.11215714f,   0.19651127f,   0.08435414f,   0.13988562f,   0.055531479f,  0.081569038f,  0.026037559f,
    -0.020897426f, -0.053648464f, -0.032751039f, -0.076959804f, -0.044208765f, -0.099340871f, -0.055132102f,
    -0.086286433f, -0.19389299f,  -0.10760655f,  -0.2352325f,   -0.12762594f,  -0.27372855f,  -0.14610261f,
    -0.065389007f, -0.14024451f,  -0.074855514f, -0.15827268f,  -0.083417177f, -0.17438769f,  -0.090970509f,
    -0.16281322f,  -0.34036899f,  -0.17755577f,  -0.36770785f,  -0.19015208f,  -0.39060193f,  -0.20044985f,
    -0.097424209f, -0.20012447f,  -0.10270026f,  -0.20943516f,  -0.1067349f,   -0.21621424f,  -0.10947934f,
    -0.26377484f,  -0.53294653f,  -0.26917171f,  -0.54048657f,  -0.27131486f,  -0.5414933f,   -0.27017844f,
};

// kAvgCeilExcludePadOutput: [2, 1, 4, 4]
const std::vector<float> kAvgCeilExcludePadOutput = {
    0.26656401f,  0.23251124f,  0.093203463f, -0.050132543f, 0.18310058f,  0.079535209f, -0.082380094f, -0.18499096f,
    0.20745933f,  0.22266334f,  0.14869425f,  0.039301027f,  0.52928919f,  0.86099654f,  0.91423535f,   0.65032005f,
    -0.25875545f, -0.24870121f, -0.13247351f, 0.0054717958f, -0.20391993f, -0.11340208f, 0.046419065f,  0.15941095f,
    -0.18776195f, -0.22343117f, -0.17458218f, -0.076710671f, -0.38337636f, -0.77985287f, -0.9474501f,   -0.76438487f,
};
// kAvgCeilExcludePadGradInput: [2, 1, 6, 7]
const std::vector<float> kAvgCeilExcludePadGradInput = {
    0.25f,         0.41565937f,  0.16565935f,   0.32830894f,   0.16264957f,   0.39916015f,  0.23651059f,   0.40079194f,
    0.66117626f,   0.26038429f,  0.51081079f,   0.25042647f,   0.60658884f,   0.35616237f,  0.15079194f,   0.2455169f,
    0.094724946f,  0.18250185f,  0.087776914f,  0.20742869f,   0.11965177f,   0.25698379f,  0.41267428f,   0.15569049f,
    0.29386696f,   0.13817649f,  0.31666481f,   0.17848834f,   0.10619185f,   0.16715738f,  0.060965538f,  0.11136511f,
    0.050399568f,  0.10923614f,  0.058836564f,  0.23027958f,   0.33802229f,   0.10774274f,  0.16840613f,   0.060663387f,
    0.079939514f,  0.01927612f,  -0.04701921f,  -0.096145771f, -0.049126562f, -0.11543971f, -0.066313148f, -0.19036037f,
    -0.12404723f,  -0.14510272f, -0.26908481f,  -0.12398207f,  -0.2737124f,   -0.14973032f, -0.41023332f,  -0.26050299f,
    -0.098083518f, -0.17293903f, -0.074855514f, -0.15827268f,  -0.083417177f, -0.21987294f, -0.13645576f,  -0.24421984f,
    -0.42177561f,  -0.17755577f, -0.36770785f,  -0.19015208f,  -0.49082685f,  -0.30067477f, -0.14613631f,  -0.24883658f,
    -0.10270026f,  -0.20943516f, -0.1067349f,   -0.27095389f,  -0.16421901f,  -0.64518821f, -1.0808313f,   -0.43564314f,
    -0.87153798f,  -0.43589482f, -1.082211f,    -0.64631623f,
};

// One PyTorch case on `device`: the module, the expected output, the expected input gradient.
void crossCheck(nn::Module& pool, const nn::Device& device, const std::vector<int64_t>& outputSizes,
                const std::vector<float>& output, const std::vector<float>& gradInput) {
  const Tensor x = formula({2, 1, 6, 7}, [](int64_t i) { return std::sin(0.37 * i); }).to(device);
  const Tensor g = formula(outputSizes, [](int64_t i) { return std::cos(0.11 * i); }).to(device);
  const Tensor& y = pool.forward(x);
  REQUIRE(y.sizes() == outputSizes);
  REQUIRE(nn::test::maxAbsDiff(y, output) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(pool.backward(x, g), gradInput) < 1e-6);
}

}  // namespace

NN_DEVICE_TEST_CASE("SpatialMaxPooling matches PyTorch's max_pool2d", "[SpatialMaxPooling]") {
  nn::SpatialMaxPooling pool(3, 3, 2, 2, 1, 1);
  crossCheck(pool, kind.device(), {2, 1, 3, 4}, kMaxFloorOutput, kMaxFloorGradInput);
  pool.ceil();
  crossCheck(pool, kind.device(), {2, 1, 4, 4}, kMaxCeilOutput, kMaxCeilGradInput);
}

NN_DEVICE_TEST_CASE("SpatialAveragePooling matches PyTorch's avg_pool2d", "[SpatialAveragePooling]") {
  nn::SpatialAveragePooling pool(3, 3, 2, 2, 1, 1);
  crossCheck(pool, kind.device(), {2, 1, 3, 4}, kAvgFloorOutput, kAvgFloorGradInput);
  pool.ceil();
  crossCheck(pool, kind.device(), {2, 1, 4, 4}, kAvgCeilOutput, kAvgCeilGradInput);
  pool.setCountExcludePad();
  crossCheck(pool, kind.device(), {2, 1, 4, 4}, kAvgCeilExcludePadOutput, kAvgCeilExcludePadGradInput);
}

NN_DEVICE_TEST_CASE("A cloned pooling module keeps its window, ceil mode and divisor",
                    "[SpatialMaxPooling][SpatialAveragePooling]") {
  // clone() rebuilds a module from its saved settings (config() then create()).
  nn::SpatialMaxPooling max(3, 3, 2, 2, 1, 1);
  max.ceil();
  const nn::ModulePtr maxCopy = max.clone();
  REQUIRE(maxCopy->toString() == "nn.SpatialMaxPooling(3x3, 2,2, 1,1)");
  REQUIRE(std::dynamic_pointer_cast<nn::SpatialMaxPooling>(maxCopy)->ceilMode());

  nn::SpatialAveragePooling avg(3, 3, 2, 2, 1, 1);
  avg.ceil().setCountExcludePad();
  const nn::ModulePtr avgCopy = avg.clone();
  auto* copy = dynamic_cast<nn::SpatialAveragePooling*>(avgCopy.get());
  REQUIRE(copy != nullptr);
  REQUIRE(copy->toString() == "nn.SpatialAveragePooling(3x3, 2,2, 1,1)");
  REQUIRE(copy->ceilMode());
  REQUIRE_FALSE(copy->countIncludePad());
  // And they compute alike; 6x6 input under 3x3 windows, stride 2, padding 1: 4x4 in ceil mode.
  const Tensor x = kind.on(nn::test::randomTensor({2, 6, 6}, 7));
  REQUIRE(nn::test::maxAbsDiff(avgCopy->forward(x), avg.forward(x).toVector()) == 0);
  REQUIRE(maxCopy->forward(x).sizes() == std::vector<int64_t>{2, 4, 4});
}

namespace {

// Elements whose bits differ (so -0 differs from 0; any NaN equals any NaN); the sizes
// must match.
int64_t differingBits(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.toVector(), y = b.toVector();
  if (x.size() != y.size()) return -1;
  int64_t differing = 0;
  // Two NaNs count as equal: a NaN that arithmetic makes (an average over a window holding one)
  // carries the device's payload, the operand's on x86 and the canonical 0x7fffffff on CUDA.
  for (size_t i = 0; i < x.size(); ++i)
    differing += std::memcmp(&x[i], &y[i], sizeof(float)) != 0 && !(std::isnan(x[i]) && std::isnan(y[i]));
  return differing;
}

// Values on a grid of 0.25 in [-2, 2), so that many windows hold equal maxima, and a NaN,
// which must win its windows on every device.
Tensor poolingInput(const std::vector<int64_t>& sizes, uint64_t seed) {
  Tensor x = nn::test::randomTensor(sizes, seed, -2.f, 2.f);
  float* v = x.data();
  for (int64_t i = 0; i < x.numel(); ++i) v[i] = std::floor(v[i] * 4.f) / 4.f;
  v[x.numel() / 3] = std::numeric_limits<float>::quiet_NaN();
  return x;
}

// Random gradients with some -0 among them: where windows are disjoint, max pooling writes a
// winner's gradient as it is, elsewhere it adds it to 0, which makes -0 into 0.
Tensor gradientWithNegativeZeros(const std::vector<int64_t>& sizes, uint64_t seed) {
  Tensor g = nn::test::randomTensor(sizes, seed);
  for (int64_t i = 0; i < g.numel(); i += 7) g.data()[i] = -0.f;
  return g;
}

struct PoolingCase {
  const char* name;
  std::vector<int64_t> sizes;  // the input's
  int64_t k, d, pad;
  bool ceil;
};

// Odd batch and planes throughout. 13 x 11 under 3x3 windows, stride 2, padding 1, in both
// modes (ceil mode adds a last window hanging over the edge); 9 x 8 under 2x2, stride 2: windows
// that tile the input (the CPU's faster path) with a row below them that no window covers; a
// 3-D input; 7 x 10 under 3x3, stride 2, no padding, in ceil mode.
const std::vector<PoolingCase> kPoolingCases = {
    {"3x3 stride 2 pad 1", {3, 5, 13, 11}, 3, 2, 1, false}, {"3x3 stride 2 pad 1 ceil", {3, 5, 13, 11}, 3, 2, 1, true},
    {"2x2 stride 2, tiling", {3, 5, 9, 8}, 2, 2, 0, false}, {"3-D input", {5, 9, 8}, 3, 2, 1, true},
    {"3x3 stride 2 ceil", {1, 3, 7, 10}, 3, 2, 0, true},
};

// Runs `reference` on the host and `tested` (a copy of it) on `device`, forward and backward
// on x and g, and requires equal bits of output, indices and gradInput.
void requireSameBits(nn::Module& reference, nn::Module& tested, const Tensor& x, const Tensor& g,
                     const nn::Device& device) {
  const Tensor xOn = x.to(device), gOn = g.to(device);
  const Tensor& yOn = tested.forward(xOn);
  REQUIRE(yOn.device() == device);
  REQUIRE(differingBits(yOn, reference.forward(x)) == 0);
  if (auto* referenceMax = dynamic_cast<nn::SpatialMaxPooling*>(&reference))
    REQUIRE(differingBits(dynamic_cast<nn::SpatialMaxPooling&>(tested).indices, referenceMax->indices) == 0);
  REQUIRE(differingBits(tested.backward(xOn, gOn), reference.backward(x, g)) == 0);
}

}  // namespace

NN_DEVICE_TEST_CASE("SpatialMaxPooling and SpatialAveragePooling on another device give the host's bits",
                    "[SpatialMaxPooling][SpatialAveragePooling]") {
  const nn::Device device = kind.compared();
  for (const PoolingCase& c : kPoolingCases) {
    CAPTURE(c.name);
    const Tensor x = poolingInput(c.sizes, 11);
    nn::SpatialMaxPooling maxReference(c.k, c.k, c.d, c.d, c.pad, c.pad);
    if (c.ceil) maxReference.ceil();
    const Tensor g = gradientWithNegativeZeros(maxReference.forward(x).sizes(), 12);
    auto maxTested = maxReference.clone();
    maxTested->to(device);
    requireSameBits(maxReference, *maxTested, x, g, device);
    for (const bool includePad : {true, false}) {
      CAPTURE(includePad);
      nn::SpatialAveragePooling avgReference(c.k, c.k, c.d, c.d, c.pad, c.pad);
      if (c.ceil) avgReference.ceil();
      if (!includePad) avgReference.setCountExcludePad();
      auto avgTested = avgReference.clone();
      avgTested->to(device);
      requireSameBits(avgReference, *avgTested, nn::test::randomTensor(c.sizes, 13), g, device);
    }
  }
}

NN_DEVICE_TEST_CASE("Pooling on another device takes a non-contiguous input as the host does",
                    "[SpatialMaxPooling][SpatialAveragePooling]") {
  const nn::Device device = kind.compared();
  const Tensor stored = poolingInput({3, 5, 11, 13}, 21);
  const Tensor x = stored.transpose(2, 3);  // [3, 5, 13, 11]
  REQUIRE_FALSE(x.isContiguous());
  nn::SpatialMaxPooling maxReference(3, 3, 2, 2, 1, 1);
  nn::SpatialAveragePooling avgReference(3, 3, 2, 2, 1, 1);
  maxReference.ceil();
  avgReference.ceil();
  const Tensor g = gradientWithNegativeZeros(maxReference.forward(x).sizes(), 22);
  for (nn::Module* reference : {static_cast<nn::Module*>(&maxReference), static_cast<nn::Module*>(&avgReference)}) {
    CAPTURE(reference->toString());
    auto tested = reference->clone();
    tested->to(device);
    // The strided host view goes to the device as a contiguous copy.
    requireSameBits(*reference, *tested, x, g, device);
    // A strided view of the device's memory is made contiguous there (the backend's strided
    // copy), with the same bits (compared as bits: the outputs hold the input's NaN).
    const Tensor fromStrided = tested->forward(stored.to(device).transpose(2, 3)).clone();
    REQUIRE(differingBits(fromStrided, reference->forward(x)) == 0);
  }
}
