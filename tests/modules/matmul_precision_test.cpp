// The float32 matmul precision (nn/runtime/MatmulPrecision.h) on the CPU: its names; at highest and
// high a Linear gives the floats it gave before any setting; at medium, where the CPU has
// AVX512-BF16 at the kernels' level avx512, its products are bfloat16's (a double sum of the
// rounded operands within float32's rounding, away from the un-rounded sum by bfloat16-sized
// amounts) and they take the GEMM route, and where it has not, the floats of highest. CUDA's
// compute types (nn/cuda/Gemm.cpp) need a GPU, which these tests do not have.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "nn/cpu/Bf16Gemm.h"
#include "nn/cpu/Routes.h"
#include "nn/modules/Linear.h"
#include "nn/runtime/MatmulPrecision.h"
#include "nn/tensor/Error.h"
#include "nn/tensor/Random.h"
#include "tests/reference/Bf16Reference.h"
#include "tests/support/GradCheck.h"
#include "tests/support/Routes.h"
#include "tests/support/Skip.h"

using nn::MatmulPrecision;
using nn::Tensor;

namespace {

// Sets a precision for a test's scope.
class PrecisionGuard {
 public:
  explicit PrecisionGuard(MatmulPrecision precision) : previous_(nn::float32MatmulPrecision()) {
    nn::setFloat32MatmulPrecision(precision);
  }
  ~PrecisionGuard() { nn::setFloat32MatmulPrecision(previous_); }

 private:
  MatmulPrecision previous_;
};

struct Shape {
  int64_t batch, in, out;
};

// A training batch (the direct route's tiles at highest) and a small one (OpenBLAS's route at
// highest), both past the bfloat16 kernel's tiles and k pairs (odd inputs).
const std::vector<Shape> kShapes = {{64, 301, 70}, {5, 77, 40}};

// A Linear's forward on the CPU, from the same weights and input for a shape.
std::vector<float> forward(const Shape& s, MatmulPrecision precision) {
  PrecisionGuard guard(precision);
  nn::manualSeed(31);
  nn::Linear linear(s.in, s.out);
  return linear.forward(nn::test::randomTensor({s.batch, s.in}, 32)).toVector();
}

}  // namespace

TEST_CASE("The float32 matmul precision is highest until set, named as PyTorch names it", "[precision]") {
  CHECK(nn::float32MatmulPrecision() == MatmulPrecision::highest);
  for (MatmulPrecision p : {MatmulPrecision::highest, MatmulPrecision::high, MatmulPrecision::medium}) {
    CHECK(nn::matmulPrecisionNamed(nn::matmulPrecisionName(p)) == p);
    PrecisionGuard guard(p);
    CHECK(nn::float32MatmulPrecision() == p);
    CHECK(nn::cpuMatmulPrecisionInfo().rfind(nn::matmulPrecisionName(p), 0) == 0);
  }
  CHECK(nn::matmulPrecisionName(MatmulPrecision::medium) == std::string("medium"));
  CHECK_THROWS_WITH(nn::matmulPrecisionNamed("low"),
                    Catch::Contains("highest, high or medium") && Catch::Contains("'low'"));
  CHECK(nn::float32MatmulPrecision() == MatmulPrecision::highest);
}

TEST_CASE("At highest and high a Linear on the CPU gives the floats it gave before any setting", "[precision]") {
  for (const Shape& s : kShapes) {
    CAPTURE(s.batch, s.in, s.out);
    const std::vector<float> before = forward(s, nn::float32MatmulPrecision());
    CHECK(forward(s, MatmulPrecision::high) == before);
    forward(s, MatmulPrecision::medium);
    CHECK(forward(s, MatmulPrecision::highest) == before);
    CHECK(nn::cpuMatmulPrecisionInfo() == "highest: float32 products");
  }
}

TEST_CASE("At medium a CPU without AVX512-BF16 (or below the level avx512) multiplies in float32", "[precision]") {
  // Lowered to avx2, this machine is one.
  const nn::cpu::Isa previous = nn::cpu::setIsa(nn::cpu::Isa::avx2);
  for (const Shape& s : kShapes) {
    CAPTURE(s.batch, s.in, s.out);
    CHECK(forward(s, MatmulPrecision::medium) == forward(s, MatmulPrecision::highest));
  }
  PrecisionGuard guard(MatmulPrecision::medium);
  const std::string info = nn::cpuMatmulPrecisionInfo();
  nn::cpu::setIsa(previous);
  CHECK_THAT(info, Catch::StartsWith("medium: float32 products (") && Catch::Contains("avx2"));
}

TEST_CASE("At medium a Linear on the CPU multiplies in bfloat16 through the GEMM route", "[precision]") {
  if (const std::string why = nn::cpu::bf16GemmMissing(); !why.empty()) NN_SKIP(why);
  for (const Shape& s : kShapes) {
    CAPTURE(s.batch, s.in, s.out);
    nn::manualSeed(31);
    nn::Linear linear(s.in, s.out);
    const Tensor x = nn::test::randomTensor({s.batch, s.in}, 32);
    const std::vector<float> w = linear.weight.toVector(), b = linear.bias.toVector(), xv = x.toVector();
    const std::vector<float> highest = forward(s, MatmulPrecision::highest);
    PrecisionGuard guard(MatmulPrecision::medium);
    CHECK(nn::cpuMatmulPrecisionInfo() == std::string("medium: bfloat16 products (") + nn::cpu::bf16GemmKernel() + ")");
    const nn::test::RouteWatch gemm(nn::cpu::Route::linearBlas);
    const std::vector<float> y = linear.forward(x).toVector();
    CHECK(gemm.ran(nn::cpu::Pass::forward) == 1);
    // Each output against bias + the sum of the rounded terms, within float32's rounding of in + 1
    // terms: (in + 4) 2^-24 of their magnitudes. Against the un-rounded sum, the float32 result
    // (highest) is within that bound, the bfloat16 one is not: each operand is off by up to 2^-9
    // of itself, so a term by up to about 2^-8 of its magnitude, which bounds the difference.
    double worstRounded = 0, worstExact = 0, worstHighest = 0, worstGap = 0;
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t o = 0; o < s.out; ++o) {
        double rounded = b[o], exact = b[o], magnitude = std::fabs(b[o]);
        for (int64_t k = 0; k < s.in; ++k) {
          const float xk = xv[n * s.in + k], wk = w[o * s.in + k];
          rounded += double{nn::test::bf16(xk)} * nn::test::bf16(wk);
          exact += double{xk} * wk;
          magnitude += std::fabs(double{xk} * wk);
        }
        const double bound = std::ldexp(static_cast<double>(s.in + 4), -24) * magnitude;
        const size_t i = static_cast<size_t>(n * s.out + o);
        worstRounded = std::max(worstRounded, std::fabs(y[i] - rounded) / bound);
        worstExact = std::max(worstExact, std::fabs(y[i] - exact) / bound);
        worstHighest = std::max(worstHighest, std::fabs(highest[i] - exact) / bound);
        worstGap = std::max(worstGap, std::fabs(y[i] - highest[i]) / (std::ldexp(1.01, -8) * magnitude + 2 * bound));
      }
    CHECK(worstRounded <= 1);
    CHECK(worstHighest <= 1);
    CHECK(worstExact > 1);
    CHECK(worstGap <= 1);
  }
}
