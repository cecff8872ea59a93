// The bfloat16 GEMMs of AVX512-BF16 CPUs (nn/cpu/Bf16Gemm.h) and of AMX CPUs (nn/cpu/AmxGemm.h):
// every transA/transB combination on sizes at and past their tiles' and blocks' edges (1, 15, 16,
// 17, 33, 255, 513; odd k), with alpha and beta, leading dimensions past the width, against a
// double sum of the bfloat16-rounded operands within float32's rounding of k terms, and outside
// that bound of the un-rounded operands' product (so that sgemm in its place fails); a literal
// case; and their refusal below the level avx512. Skipped, naming why, where the CPU or the run
// cannot run them.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nn/cpu/AmxGemm.h"
#include "nn/cpu/Bf16Gemm.h"
#include "nn/cpu/Blas.h"
#include "nn/cpu/Isa.h"
#include "nn/runtime/ComputeThreads.h"
#include "nn/runtime/MatmulPrecision.h"
#include "nn/tensor/Error.h"
#include "tests/reference/Bf16Reference.h"
#include "tests/support/Skip.h"

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
using Gemm = void (*)(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float,
                      float*, int64_t);

Worst compare(Gemm gemm, bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, float beta,
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
  gemm(transA, transB, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
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

// Every edge case of `gemm` (sizes past its tiles and blocks, each transA/transB, alpha and beta).
void checkEdges(Gemm gemm) {
  std::mt19937 random(7);
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer looks for races, and these products run on the calling thread alone: the
  // edges of the tiles, not the long sums whose double references take it minutes.
  const int64_t sizes[] = {1, 15, 16, 17, 33};
#else
  const int64_t sizes[] = {1, 15, 16, 17, 33, 255, 513};
#endif
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
            const Worst worst = compare(gemm, transA, transB, m, n, k, alpha, beta, random);
            CHECK(worst.rounded <= 1);
            // sgemm, on the un-rounded operands, would be within the bound: the rounding shows.
            // Not always in one long sum: its terms' rounding errors, of random signs, can cancel
            // to within it (1 x 1 with k 513 did); among 15 elements or more, or in short sums,
            // some element shows it.
            if (m * n >= 15 || k <= 33) CHECK(worst.exact > 1);
          }
}

}  // namespace

TEST_CASE("bf16Gemm's vdpbf16ps kernel rounds to bfloat16 and sums in float32, on every edge of its tiles", "[bf16]") {
  NN_REQUIRE_BF16_GEMM();
  checkEdges(&nn::cpu::avx512Bf16Gemm);
}

TEST_CASE("amxGemm rounds to bfloat16 and sums in float32, on every edge of its tiles", "[bf16][amx]") {
  if (const std::string why = nn::cpu::amxGemmMissing(); !why.empty()) NN_SKIP(why);
  checkEdges(&nn::cpu::amxGemm);
}

TEST_CASE("amxGemmRows and amxGemmRowsOfA give amxGemm's floats, their rows read through pointers", "[bf16][amx]") {
  if (const std::string why = nn::cpu::amxGemmMissing(); !why.empty()) NN_SKIP(why);
  std::mt19937 random(11);
  // Past a block of op(A)'s rows (256), of op(B)'s columns (512) and of k (512), and within them.
  for (const auto& [m, n, k] : std::vector<std::array<int64_t, 3>>{{17, 33, 15}, {64, 954, 576}, {300, 40, 600}}) {
    CAPTURE(m, n, k);
    const std::vector<float> a = matrix(m, k, k, random), b = matrix(k, n, n, random), bt = matrix(n, k, k, random);
    // The rows scattered in a larger buffer, in reverse order, each at its pointer.
    auto scatter = [](const std::vector<float>& rows, int64_t count, int64_t length, std::vector<float>& buffer,
                      std::vector<const float*>& pointers) {
      buffer.assign(static_cast<size_t>(count * (length + 3) + 1), std::nanf(""));
      pointers.resize(static_cast<size_t>(count));
      for (int64_t r = 0; r < count; ++r) {
        float* at = buffer.data() + (count - 1 - r) * (length + 3) + 1;
        std::copy(rows.begin() + r * length, rows.begin() + (r + 1) * length, at);
        pointers[static_cast<size_t>(r)] = at;
      }
    };
    std::vector<float> scatteredB, scatteredA;
    std::vector<const float*> bRows, aRows;
    scatter(b, k, n, scatteredB, bRows);
    scatter(a, m, k, scatteredA, aRows);
    std::vector<float> expected(static_cast<size_t>(m * n)), got(expected.size());
    nn::cpu::amxGemm(false, false, m, n, k, 0.5f, a.data(), k, b.data(), n, 0.f, expected.data(), n);
    nn::cpu::amxGemmRows(m, n, k, 0.5f, a.data(), k, bRows.data(), 0.f, got.data(), n);
    CHECK(got == expected);
    nn::cpu::amxGemmRowsOfA(false, m, n, k, 0.5f, aRows.data(), b.data(), n, 0.f, got.data(), n);
    CHECK(got == expected);
    nn::cpu::amxGemm(false, true, m, n, k, 1.f, a.data(), k, bt.data(), k, 0.f, expected.data(), n);
    std::fill(got.begin(), got.end(), 1.f);
    nn::cpu::amxGemmRowsOfA(true, m, n, k, 1.f, aRows.data(), bt.data(), k, 0.f, got.data(), n);
    CHECK(got == expected);
  }
}

namespace {

// The kernels that run here, by name: bf16Gemm's choice, the vdpbf16ps kernel, and AMX's where it
// runs.
std::vector<std::pair<const char*, Gemm>> kernels() {
  std::vector<std::pair<const char*, Gemm>> list = {{"bf16Gemm", &nn::cpu::bf16Gemm},
                                                    {"avx512Bf16Gemm", &nn::cpu::avx512Bf16Gemm}};
  if (nn::cpu::amxGemmRuns()) list.emplace_back("amxGemm", &nn::cpu::amxGemm);
  return list;
}

}  // namespace

TEST_CASE("bf16Gemm's rounding, literally", "[bf16]") {
  NN_REQUIRE_BF16_GEMM();
  for (const auto& [name, gemm] : kernels()) {
    CAPTURE(name);
    // 1 + 2^-8 lies halfway between bfloat16's 1 and 1 + 2^-7 and goes to the even one, 1; 1 + 3
    // 2^-8 halfway between 1 + 2^-7 and 1 + 2^-6, and goes to 1 + 2^-6. So [1 + 2^-8, 1 + 3 2^-8] .
    // [1, -1] is 1 - (1 + 2^-6) = -2^-6, where float32 gives -2^-7; times alpha 2, plus beta 0.5
    // times 1.
    const float a[] = {1.f + std::ldexp(1.f, -8), 1.f + 3 * std::ldexp(1.f, -8)}, b[] = {1.f, -1.f};
    float c = 1.f;
    gemm(false, false, 1, 1, 2, 2.f, a, 2, b, 1, 0.5f, &c, 1);
    CHECK(c == 0.5f - 2 * std::ldexp(1.f, -6));
    // An odd k: the last pair's second value is a zero of the packing, whatever lies past the end.
    const float odd[] = {3.f, std::numeric_limits<float>::quiet_NaN()}, one[] = {0.5f, 7.f};
    gemm(false, true, 1, 1, 1, 1.f, odd, 1, one, 1, 0.f, &c, 1);
    CHECK(c == 1.5f);
    // k 0: C = beta C, where beta 0 reads nothing; m or n 0: nothing written.
    float d[] = {2.f, std::numeric_limits<float>::quiet_NaN()};
    gemm(false, false, 1, 1, 0, 1.f, nullptr, 1, nullptr, 1, 0.5f, d, 1);
    CHECK(d[0] == 1.f);
    gemm(true, true, 1, 1, 0, 1.f, nullptr, 1, nullptr, 1, 0.f, d + 1, 1);
    CHECK(d[1] == 0.f);
    gemm(false, false, 0, 1, 3, 1.f, nullptr, 3, b, 1, 0.f, nullptr, 1);
    gemm(false, false, 1, 0, 3, 1.f, a, 3, nullptr, 1, 0.f, nullptr, 1);
    CHECK_THROWS_AS(gemm(false, false, -1, 1, 1, 1.f, a, 1, b, 1, 0.f, d, 1), nn::Error);
    CHECK_THROWS_AS(gemm(false, false, 1, 1, int64_t{1} << 31, 1.f, a, 1, b, 1, 0.f, d, 1), nn::Error);
  }
}

TEST_CASE("bf16Gemm runs at the level avx512 only, AMX's tiles never below it", "[bf16][amx]") {
  NN_REQUIRE_BF16_GEMM();
  const nn::cpu::Isa previous = nn::cpu::setIsa(nn::cpu::Isa::avx2);
  const bool runs = nn::cpu::bf16GemmRuns(), amxRuns = nn::cpu::amxGemmRuns();
  const std::string missing = nn::cpu::bf16GemmMissing(), amxMissing = nn::cpu::amxGemmMissing();
  const int64_t amxCalls = nn::cpu::amxGemmCalls();
  float a = 1.f, b = 1.f, c = 0.f;
  int refused = 0;
  for (Gemm gemm : {&nn::cpu::bf16Gemm, &nn::cpu::avx512Bf16Gemm, &nn::cpu::amxGemm}) {
    try {
      gemm(false, false, 1, 1, 1, 1.f, &a, 1, &b, 1, 0.f, &c, 1);
    } catch (const nn::Error&) {
      ++refused;
    }
  }
  nn::cpu::setIsa(previous);
  CHECK_FALSE(runs);
  CHECK_FALSE(amxRuns);
  CHECK(missing.find("avx2") != std::string::npos);
  CHECK(amxMissing == missing);
  CHECK(refused == 3);
  CHECK(nn::cpu::amxGemmCalls() == amxCalls);
}

TEST_CASE("At medium nn::blas::gemm runs on AMX tiles on every compute thread, where the CPU has them", "[bf16][amx]") {
  if (const std::string why = nn::cpu::amxGemmMissing(); !why.empty()) NN_SKIP(why);
  CHECK(std::string(nn::cpu::bf16GemmKernel()) == "AMX");
  // A Linear layer's forward product y = x W^T as the CPU's kernels cut it: 2 parts of W's rows
  // (y's columns) on cpu:0's 2 compute threads, each an nn::blas::gemm call on its own thread,
  // which loads the tiles' configuration there.
  std::mt19937 random(5);
  const int64_t batch = 64, in = 301, out = 200;
  const std::vector<float> x = matrix(batch, in, in, random), w = matrix(out, in, in, random);
  std::vector<float> y(batch * out, 0.f);
  const nn::MatmulPrecision previous = nn::float32MatmulPrecision();
  nn::setFloat32MatmulPrecision(nn::MatmulPrecision::medium);
  nn::setNumThreads(2);
  const int64_t before = nn::cpu::amxGemmCalls();
  std::thread::id ids[2];
  nn::parallelFor(nn::Device::cpu(0), 2, [&](int p) {
    ids[p] = std::this_thread::get_id();
    const nn::Range r = nn::partRange(out, 2, p);
    nn::blas::gemm(false, true, batch, r.end - r.begin, in, 1.f, x.data(), in, w.data() + r.begin * in, in, 0.f,
                   y.data() + r.begin, out);
  });
  const int64_t calls = nn::cpu::amxGemmCalls() - before;
  // Held off, the same product runs on vdpbf16ps.
  const bool allowed = nn::cpu::allowAmx(false);
  const std::string heldOff = nn::cpu::amxGemmMissing();
  const std::string kernel = nn::cpu::bf16GemmKernel();
  std::vector<float> z(batch * out, 0.f);
  nn::blas::gemm(false, true, batch, out, in, 1.f, x.data(), in, w.data(), in, 0.f, z.data(), out);
  const int64_t heldCalls = nn::cpu::amxGemmCalls() - before;
  nn::cpu::allowAmx(allowed);
  nn::setNumThreads(1);
  nn::setFloat32MatmulPrecision(previous);
  CHECK(calls == 2);
  CHECK(ids[0] != ids[1]);
  CHECK(heldCalls == 2);
  CHECK(kernel == "AVX512-BF16");
  CHECK(heldOff.find("allowAmx") != std::string::npos);
  CHECK(nn::cpu::amxGemmRuns());
  // Each output against the double sum of the rounded terms, within float32's rounding.
  double worst = 0;
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t o = 0; o < out; ++o) {
      double sum = 0, magnitude = 0;
      for (int64_t p = 0; p < in; ++p) {
        const double term = double{bf16(x[i * in + p])} * bf16(w[o * in + p]);
        sum += term;
        magnitude += std::fabs(term);
      }
      const double bound = std::ldexp(in + 4.0, -24) * magnitude;
      worst = std::max({worst, std::fabs(y[i * out + o] - sum) / bound, std::fabs(z[i * out + o] - sum) / bound});
    }
  CHECK(worst <= 1);
}

TEST_CASE("amxGemm on two threads at once gives each the floats it gives alone", "[bf16][amx]") {
  if (const std::string why = nn::cpu::amxGemmMissing(); !why.empty()) NN_SKIP(why);
  // Two products of their own, each run on the main thread and then both at once on two threads
  // (each loading the tiles' configuration, packing into its own buffers, releasing the tiles).
  std::mt19937 random(11);
  const int64_t m = 70, n = 90, k = 600;
  std::vector<float> a[2], b[2], alone[2], together[2];
  for (int t = 0; t < 2; ++t) {
    a[t] = matrix(m, k, k, random);
    b[t] = matrix(n, k, k, random);
    alone[t].assign(m * n, 0.f);
    together[t].assign(m * n, 0.f);
    nn::cpu::amxGemm(false, true, m, n, k, 1.f, a[t].data(), k, b[t].data(), k, 0.f, alone[t].data(), n);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 20; ++r)
        nn::cpu::amxGemm(false, true, m, n, k, 1.f, a[t].data(), k, b[t].data(), k, 0.f, together[t].data(), n);
    });
  for (std::thread& thread : threads) thread.join();
  CHECK(together[0] == alone[0]);
  CHECK(together[1] == alone[1]);
  CHECK(alone[0] != alone[1]);
}
