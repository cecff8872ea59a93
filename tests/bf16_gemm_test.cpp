// The bfloat16 GEMM of AVX512-BF16 CPUs (nn/cpu/Bf16Gemm.h): every transA/transB combination on
// sizes at and past its tiles' and blocks' edges (1, 15, 16, 17, 33, 255, 513; odd k), with alpha
// and beta, leading dimensions past the width, against a double sum of the bfloat16-rounded
// operands within float32's rounding of k terms, and outside that bound of the un-rounded
// operands' product (so that sgemm in its place fails); a literal case; and its refusal below
// the level avx512. Skipped, naming why, where the CPU or the run cannot run it.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "nn/core/Error.h"
#include "nn/cpu/Bf16Gemm.h"
#include "nn/cpu/Isa.h"
#include "tests/Bf16Reference.h"
#include "tests/Skip.h"

namespace {

using nn::test::bf16;

// A rows x cols matrix stored with row stride ld > cols: the values drawn from [-1, 1], NaN past
// each row's end (which no product may read).
std::vector<float> matrix(int64_t rows, int64_t cols, int64_t ld, std::mt19937& random) {
  std::uniform_real_distribution<float> value(-1.f, 1.f);
  std::vector<float> m(static_cast<size_t>(rows * ld), std::numeric_limits<float>::quiet_NaN());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) m[i * ld + j] = value(random);
  return m;
}

struct Worst {
  double rounded = 0;  // the largest error against the rounded operands' sum, over the bound
  double exact = 0;    // and against the un-rounded operands' sum, over the same bound
};

// bf16Gemm of op(A) [m, k] and op(B) [k, n] into C [m, n], compared element by element with
// alpha S + beta C0 in double, S the sum of the rounded operands' products, over the bound of
// float32's rounding: (k + 4) 2^-24 (|alpha| sum |products| + |beta C0|) plus the least normal
// float (k terms each rounded at most once in a sum of k, alpha's and beta's products and the
// last addition). C's elements past n are checked untouched.
Worst compare(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, float beta,
              std::mt19937& random) {
  const int64_t aRows = transA ? k : m, aCols = transA ? m : k, bRows = transB ? n : k, bCols = transB ? k : n;
  const int64_t lda = aCols + 3, ldb = bCols + 5, ldc = n + 2;
  const std::vector<float> a = matrix(aRows, aCols, lda, random), b = matrix(bRows, bCols, ldb, random);
  std::vector<float> c = matrix(m, n, ldc, random);
  // beta 0 reads nothing of C: NaN there must not come through.
  if (beta == 0)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> c0 = c;
  nn::cpu::bf16Gemm(transA, transB, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  auto opA = [&](int64_t i, int64_t p) { return transA ? a[p * lda + i] : a[i * lda + p]; };
  auto opB = [&](int64_t p, int64_t j) { return transB ? b[j * ldb + p] : b[p * ldb + j]; };
  Worst worst;
  const double unit = std::ldexp(1.0, -24) * static_cast<double>(k + 4);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double rounded = 0, exact = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double product = double{bf16(opA(i, p))} * bf16(opB(p, j));
        rounded += product;
        magnitude += std::fabs(product);
        exact += double{opA(i, p)} * opB(p, j);
      }
      const double before = beta == 0 ? 0 : double{beta} * c0[i * ldc + j];
      const double bound = unit * (std::fabs(alpha) * magnitude + std::fabs(before)) + 1.2e-38;
      const double value = c[i * ldc + j];
      REQUIRE(std::isfinite(value));
      worst.rounded = std::max(worst.rounded, std::fabs(value - (alpha * rounded + before)) / bound);
      worst.exact = std::max(worst.exact, std::fabs(value - (alpha * exact + before)) / bound);
    }
    for (int64_t j = n; j < ldc; ++j) REQUIRE(std::isnan(c[i * ldc + j]));
  }
  return worst;
}

#define NN_REQUIRE_BF16_GEMM()                                                                      \
  do {                                                                                              \
    if (const std::string nn_why_ = nn::cpu::bf16GemmMissing(); !nn_why_.empty()) NN_SKIP(nn_why_); \
  } while (0)

}  // namespace

TEST_CASE("bf16Gemm rounds to bfloat16 and sums in float32, on every edge of its tiles", "[bf16]") {
  NN_REQUIRE_BF16_GEMM();
  std::mt19937 random(7);
  const int64_t sizes[] = {1, 15, 16, 17, 33, 255, 513};
  const float scales[][2] = {{1.f, 0.f}, {0.5f, 0.f}, {1.f, 1.f}, {-1.5f, 0.25f}};
  int scale = 0;
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (int64_t m : sizes)
        for (int64_t n : sizes)
          for (int64_t k : sizes) {
            // The largest products once per transA/transB combination, beside every smaller one.
            if (m * n * k > 255 * 513 * 33 && !(m == 513 && n == 255 && k == 513)) continue;
            const float alpha = scales[scale][0], beta = scales[scale][1];
            scale = (scale + 1) % 4;
            CAPTURE(transA, transB, m, n, k, alpha, beta);
            const Worst worst = compare(transA, transB, m, n, k, alpha, beta, random);
            CHECK(worst.rounded <= 1);
            // sgemm, on the un-rounded operands, would be within the bound: the rounding shows.
            // Not always in one long sum: its terms' rounding errors, of random signs, can cancel
            // to within it (1 x 1 with k 513 did); among 15 elements or more, or in short sums,
            // some element shows it.
            if (m * n >= 15 || k <= 33) CHECK(worst.exact > 1);
          }
}

TEST_CASE("bf16Gemm's rounding, literally", "[bf16]") {
  NN_REQUIRE_BF16_GEMM();
  // 1 + 2^-8 lies halfway between bfloat16's 1 and 1 + 2^-7 and goes to the even one, 1; 1 + 3 2^-8
  // halfway between 1 + 2^-7 and 1 + 2^-6, and goes to 1 + 2^-6. So [1 + 2^-8, 1 + 3 2^-8] . [1, -1]
  // is 1 - (1 + 2^-6) = -2^-6, where float32 gives -2^-7; times alpha 2, plus beta 0.5 times 1.
  const float a[] = {1.f + std::ldexp(1.f, -8), 1.f + 3 * std::ldexp(1.f, -8)}, b[] = {1.f, -1.f};
  float c = 1.f;
  nn::cpu::bf16Gemm(false, false, 1, 1, 2, 2.f, a, 2, b, 1, 0.5f, &c, 1);
  CHECK(c == 0.5f - 2 * std::ldexp(1.f, -6));
  // An odd k: the last pair's second value is a zero of the packing, whatever lies past the end.
  const float odd[] = {3.f, std::numeric_limits<float>::quiet_NaN()}, one[] = {0.5f, 7.f};
  nn::cpu::bf16Gemm(false, true, 1, 1, 1, 1.f, odd, 1, one, 1, 0.f, &c, 1);
  CHECK(c == 1.5f);
}

TEST_CASE("bf16Gemm runs at the level avx512 only", "[bf16]") {
  NN_REQUIRE_BF16_GEMM();
  const nn::cpu::Isa previous = nn::cpu::setIsa(nn::cpu::Isa::avx2);
  const bool runs = nn::cpu::bf16GemmRuns();
  const std::string missing = nn::cpu::bf16GemmMissing();
  float a = 1.f, b = 1.f, c = 0.f;
  bool refused = false;
  try {
    nn::cpu::bf16Gemm(false, false, 1, 1, 1, 1.f, &a, 1, &b, 1, 0.f, &c, 1);
  } catch (const nn::Error&) {
    refused = true;
  }
  nn::cpu::setIsa(previous);
  CHECK_FALSE(runs);
  CHECK(missing.find("avx2") != std::string::npos);
  CHECK(refused);
}
