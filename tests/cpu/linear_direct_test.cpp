// nn::Linear at training batches (16 to 512 samples, 32 outputs or more), which the CPU computes
// with its own tiles at the kernels' levels avx2 and avx512, and with 16 outputs or fewer, which
// it computes in loops of its own there (nn/cpu/DirectLinear.cpp): forward, gradInput and the
// weight and bias gradients against the sums of their terms in double, on shapes whose every edge
// is partial (samples past a block of 6, 12, 16 or 32, inputs past a strip of 16 or 32 or a
// vector, outputs past a tile of 6 or 12 and past a strip of 256 rows); finite differences; the
// same floats on 1 and 2 compute threads, whatever the batch, and in the AVX2 and AVX-512 forms.
// Each checks that the route it tests ran. On CUDA devices the same bodies check cuBLAS; at the
// level generic (nn/cpu/Isa.h), OpenBLAS.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "nn/cpu/DirectLinear.h"
#include "nn/cpu/Isa.h"
#include "nn/cpu/Routes.h"
#include "nn/modules/Linear.h"
#include "nn/runtime/ComputeThreads.h"
#include "nn/tensor/Random.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/support/Routes.h"

using nn::Tensor;

namespace {

struct Shape {
  int64_t batch, in, out;
};

const std::vector<Shape> kShapes = {
    {16, 32, 32},    // whole blocks of 32 inputs, one block of 16 samples
    {45, 37, 61},    // every edge partial: 45 = 32 + 13 = 3 x 12 + 9, 37 = 32 + 5, 61 = 5 x 12 + 1
    {130, 70, 300},  // 300 outputs: two strips of weight rows (256 + 44) for gradInput
    {20, 600, 40},   // long sums over the inputs
    {512, 16, 33},   // the largest batch, fewer inputs than a strip
    // The narrow route (16 outputs or fewer): inputs past 64 and past 16, samples past 8 and 2.
    {45, 37, 10},
    {17, 200, 16},
    {130, 64, 5},
    {3, 70, 1},
};

// Worst |value - reference| / (1 + sum of |terms|): the terms' magnitudes bound the rounding of
// any order of their sum; a wrong or missing term is off by a whole term.
double worstError(const Tensor& t, const std::vector<double>& value, const std::vector<double>& magnitude) {
  const std::vector<float> v = t.toVector();
  REQUIRE(v.size() == value.size());
  double worst = 0;
  for (size_t i = 0; i < v.size(); ++i) worst = std::max(worst, std::fabs(v[i] - value[i]) / (1 + magnitude[i]));
  return worst;
}

// The route a Linear of shape s takes on the CPU at the kernels' level in force.
nn::cpu::Route routeOf(const Shape& s) {
  if (nn::cpu::narrowLinearFits(s.batch, s.in, s.out)) return nn::cpu::Route::linearNarrow;
  if (nn::cpu::directLinearFits(s.batch, s.in, s.out)) return nn::cpu::Route::linearDirect;
  return nn::cpu::Route::linearBlas;
}

}  // namespace

TEST_CASE("Linear takes the direct route from 32 outputs at training batches, the narrow one up to 16 outputs",
          "[Linear]") {
  NN_REQUIRE_ISA(nn::cpu::Isa::avx2);
  for (const Shape& s : kShapes) {
    CAPTURE(s.batch, s.in, s.out);
    CHECK(nn::cpu::directLinearFits(s.batch, s.in, s.out) == (s.out >= 32));
    CHECK(nn::cpu::narrowLinearFits(s.batch, s.in, s.out) == (s.out <= 16));
  }
  CHECK_FALSE(nn::cpu::directLinearFits(8, 800, 500));     // a small batch: OpenBLAS
  CHECK_FALSE(nn::cpu::directLinearFits(1024, 800, 500));  // a large one
  CHECK_FALSE(nn::cpu::directLinearFits(128, 500, 10));    // a classifier's 10 outputs: narrow
  CHECK(nn::cpu::narrowLinearFits(128, 500, 10));
  CHECK_FALSE(nn::cpu::directLinearFits(128, 500, 20));  // 17 to 31 outputs: OpenBLAS
  CHECK_FALSE(nn::cpu::narrowLinearFits(128, 500, 20));
}

TEST_CASE("Linear takes OpenBLAS's route for every shape at the level generic", "[Linear]") {
  const nn::cpu::Isa previous = nn::cpu::setIsa(nn::cpu::Isa::generic);
  for (const Shape& s : kShapes) {
    CAPTURE(s.batch, s.in, s.out);
    CHECK_FALSE(nn::cpu::directLinearFits(s.batch, s.in, s.out));
    CHECK_FALSE(nn::cpu::narrowLinearFits(s.batch, s.in, s.out));
  }
  nn::cpu::setIsa(previous);
}

NN_DEVICE_TEST_CASE("Linear at training batches matches the sums of its terms", "[Linear]") {
  for (const Shape& s : kShapes)
    for (bool withBias : {true, false}) {
      CAPTURE(s.batch, s.in, s.out, withBias);
      nn::manualSeed(21);
      nn::Linear linear(s.in, s.out, withBias);
      const std::vector<float> w = linear.weight.toVector();
      const std::vector<float> b = withBias ? linear.bias.toVector() : std::vector<float>();
      const Tensor x = nn::test::randomTensor({s.batch, s.in}, 22);
      const Tensor g = nn::test::randomTensor({s.batch, s.out}, 23);
      const std::vector<float> xv = x.toVector(), gv = g.toVector();
      linear.to(kind.device());
      linear.zeroGradParameters();
      // The direct route's weight gradient is OpenBLAS's (nn/cpu/DirectLinear.h).
      const nn::cpu::Route route = routeOf(s);
      const nn::test::RouteWatch products(route);
      const nn::test::RouteWatch weightGradient(route == nn::cpu::Route::linearDirect ? nn::cpu::Route::linearBlas
                                                                                      : route);
      const Tensor y = linear.forward(kind.on(x)).clone();
      const Tensor gi = linear.backward(kind.on(x), kind.on(g), 0.5f).clone();
      if (kind.isCpu()) {
        CHECK(products.ran(nn::cpu::Pass::forward) == 1);
        CHECK(products.ran(nn::cpu::Pass::gradInput) == 1);
        CHECK(weightGradient.ran(nn::cpu::Pass::gradParameters) == 1);
      }

      std::vector<double> yRef(s.batch * s.out), yMag(s.batch * s.out);
      for (int64_t n = 0; n < s.batch; ++n)
        for (int64_t o = 0; o < s.out; ++o) {
          double sum = withBias ? b[o] : 0, magnitude = withBias ? std::fabs(b[o]) : 0;
          for (int64_t k = 0; k < s.in; ++k) {
            const double term = double(xv[n * s.in + k]) * w[o * s.in + k];
            sum += term, magnitude += std::fabs(term);
          }
          yRef[n * s.out + o] = sum, yMag[n * s.out + o] = magnitude;
        }
      std::vector<double> giRef(s.batch * s.in), giMag(s.batch * s.in);
      for (int64_t n = 0; n < s.batch; ++n)
        for (int64_t k = 0; k < s.in; ++k) {
          double sum = 0, magnitude = 0;
          for (int64_t o = 0; o < s.out; ++o) {
            const double term = double(gv[n * s.out + o]) * w[o * s.in + k];
            sum += term, magnitude += std::fabs(term);
          }
          giRef[n * s.in + k] = sum, giMag[n * s.in + k] = magnitude;
        }
      std::vector<double> gwRef(s.out * s.in), gwMag(s.out * s.in), gbRef(s.out), gbMag(s.out);
      for (int64_t o = 0; o < s.out; ++o) {
        for (int64_t k = 0; k < s.in; ++k) {
          double sum = 0, magnitude = 0;
          for (int64_t n = 0; n < s.batch; ++n) {
            const double term = 0.5 * gv[n * s.out + o] * xv[n * s.in + k];
            sum += term, magnitude += std::fabs(term);
          }
          gwRef[o * s.in + k] = sum, gwMag[o * s.in + k] = magnitude;
        }
        for (int64_t n = 0; n < s.batch; ++n)
          gbRef[o] += 0.5 * gv[n * s.out + o], gbMag[o] += 0.5 * std::fabs(gv[n * s.out + o]);
      }
      CHECK(worstError(y, yRef, yMag) < 1e-6);
      CHECK(worstError(gi, giRef, giMag) < 1e-6);
      CHECK(worstError(linear.gradWeight, gwRef, gwMag) < 1e-6);
      if (withBias) CHECK(worstError(linear.gradBias, gbRef, gbMag) < 1e-6);
    }
}

NN_DEVICE_TEST_CASE("Linear at a training batch and with a classifier's few outputs agrees with finite differences",
                    "[Linear]") {
  // The direct route (17 samples, 40 outputs) and the narrow one (3 outputs).
  for (const Shape& s : {Shape{17, 13, 40}, Shape{5, 19, 3}}) {
    CAPTURE(s.batch, s.in, s.out);
    nn::manualSeed(24);
    nn::Linear linear(s.in, s.out);
    linear.to(kind.device());
    const Tensor x = kind.on(nn::test::randomTensor({s.batch, s.in}, 25));
    REQUIRE_THAT(nn::test::checkInputGradient(linear, x), nn::test::AgreesWithin(1e-3));
    REQUIRE_THAT(nn::test::checkParameterGradients(linear, x), nn::test::EachAgreesWithin(1e-3, 2));
  }
}

TEST_CASE("Linear at training batches gives the same floats on 1 and 2 compute threads and for any batch", "[Linear]") {
  NN_REQUIRE_ISA(nn::cpu::Isa::avx2);
  for (int64_t out : {300, 10}) {  // the direct route, the narrow one
    CAPTURE(out);
    nn::manualSeed(26);
    nn::Linear linear(70, out);
    const Tensor x = nn::test::randomTensor({45, 70}, 27);
    const Tensor g = nn::test::randomTensor({45, out}, 28);
    const nn::test::RouteWatch route(routeOf(Shape{45, 70, out}));
    REQUIRE(route.ran(nn::cpu::Pass::forward) == 0);
    linear.zeroGradParameters();
    const Tensor y = linear.forward(x).clone();
    const Tensor gi = linear.backward(x, g).clone();
    const Tensor gw = linear.gradWeight.clone();
    nn::setNumThreads(2);
    linear.zeroGradParameters();
    const Tensor y2 = linear.forward(x).clone();
    const Tensor gi2 = linear.backward(x, g).clone();
    nn::setNumThreads(1);
    CHECK(nn::test::maxAbsDiff(y2, y) == 0);
    CHECK(nn::test::maxAbsDiff(gi2, gi) == 0);
    // The narrow route's weight gradient: each sum over the batch in order, on one thread.
    if (out == 10) CHECK(nn::test::maxAbsDiff(linear.gradWeight, gw) == 0);
    // A sample's output and gradInput are its own sums: the last 20 samples alone give the same.
    const Tensor tail = x.narrow(0, 25, 20).contiguous(), gTail = g.narrow(0, 25, 20).contiguous();
    CHECK(nn::test::maxAbsDiff(linear.forward(tail), y.narrow(0, 25, 20).contiguous()) == 0);
    CHECK(nn::test::maxAbsDiff(linear.updateGradInput(tail, gTail), gi.narrow(0, 25, 20).contiguous()) == 0);
    CHECK(route.ran(nn::cpu::Pass::forward) == 3);
    CHECK(route.ran(nn::cpu::Pass::gradInput) == 3);
  }
}

TEST_CASE("Linear's AVX2 and AVX-512 forms give the same floats", "[Linear]") {
  // Each sum runs in the same order in both forms (nn/cpu/DirectLinear.cpp over Vec512 and Vec256), so a model
  // trained on one CPU computes as on the other.
  NN_REQUIRE_ISA(nn::cpu::Isa::avx512);
  for (const Shape& s : kShapes) {
    CAPTURE(s.batch, s.in, s.out);
    nn::manualSeed(29);
    nn::Linear linear(s.in, s.out);
    const Tensor x = nn::test::randomTensor({s.batch, s.in}, 30);
    const Tensor g = nn::test::randomTensor({s.batch, s.out}, 31);
    std::vector<Tensor> results[2];
    for (nn::cpu::Isa level : {nn::cpu::Isa::avx512, nn::cpu::Isa::avx2}) {
      CAPTURE(nn::cpu::isaName(level));
      const nn::cpu::Isa previous = nn::cpu::setIsa(level);
      const nn::cpu::Isa other = level == nn::cpu::Isa::avx2 ? nn::cpu::Isa::avx512 : nn::cpu::Isa::avx2;
      const int64_t ran = nn::cpu::formCount(level), otherRan = nn::cpu::formCount(other);
      linear.zeroGradParameters();
      const Tensor y = linear.forward(x).clone();
      const Tensor gi = linear.backward(x, g, 0.5f).clone();
      results[level == nn::cpu::Isa::avx2] = {y, gi, linear.gradWeight.clone(), linear.gradBias.clone()};
      // The level's own form ran (forward and gradInput), the other's not.
      CHECK(nn::cpu::formCount(level) - ran >= 2);
      CHECK(nn::cpu::formCount(other) == otherRan);
      nn::cpu::setIsa(previous);
    }
    CHECK(nn::test::maxAbsDiff(results[1][0], results[0][0]) == 0);
    CHECK(nn::test::maxAbsDiff(results[1][1], results[0][1]) == 0);
    // (The direct route's weight gradient is OpenBLAS's, the same kernel at both levels.)
    CHECK(nn::test::maxAbsDiff(results[1][2], results[0][2]) == 0);
    CHECK(nn::test::maxAbsDiff(results[1][3], results[0][3]) == 0);
  }
}
