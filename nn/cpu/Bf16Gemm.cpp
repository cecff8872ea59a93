// bf16Gemm (Bf16Gemm.h): operands packed as bfloat16 pairs, tiles of 12 x 32 sums in AVX-512
// registers (Note [bfloat16 GEMM]).
#include "nn/cpu/Bf16Gemm.h"

#include <algorithm>

#include "nn/cpu/AmxGemm.h"
#include "nn/cpu/Avx512.h"
#include "nn/cpu/Bf16Packing.h"
#include "nn/cpu/CpuFeatures.h"
#include "nn/cpu/Isa.h"
#include "nn/tensor/Error.h"

// Note [bfloat16 GEMM]
// vdpbf16ps takes 32 bfloat16 values from each of two vectors and adds, to lane i of a float32
// vector, x[2i] y[2i] + x[2i + 1] y[2i + 1] (each product exact in float32). So both operands are
// packed as pairs of consecutive k, each pair one 32-bit lane: op(B) in panels of 32 columns, a
// pair's 32 columns two vectors; op(A) in tiles of 12 rows, a pair's 12 lanes broadcast one at a
// time. A tile of C, 12 rows x 32 columns, keeps its sums in 24 of the 32 vector registers for the
// whole of a block of k, and reads and writes C once per block. GotoBLAS's blocking: k in blocks of
// kDepth (a B panel of 256 k is 16 KB, and stays in the first-level cache while the A tiles of a
// block of kRowBlock rows, 48 KB, stream past it from the second), n in blocks of kColumnBlock
// columns (256 KB of packed B, second level). The rounding is the instruction's (vcvtne2ps2bf16:
// to nearest, ties to even; a NaN stays a NaN; denormals, below bfloat16's range, become zeros of
// their sign), the same for every element. An odd k's last pair is padded with zeros. The packing
// buffers are the calling thread's, grown to the largest call's and kept.

namespace nn::cpu {

#if NN_AVX512

namespace {

constexpr int kTileRows = 12;
constexpr int kTileColumns = 32;
// k of a block, even: each block's pairs are its own.
constexpr int64_t kDepth = 256;
constexpr int64_t kRowBlock = 8 * kTileRows;
constexpr int64_t kColumnBlock = 16 * kTileColumns;

thread_local Lanes packedA, packedB;

// The block of op(A) of `rows` rows from i0 and `depth` k from k0, as tiles of 12 rows:
// tile[pair][12 lanes], zeros past the block's rows and k.
NN_BF16_KERNEL void packA(bool transA, const float* a, int64_t lda, int64_t i0, int64_t k0, int64_t rows, int64_t depth,
                          uint32_t* out) {
  const int64_t pairs = (depth + 1) / 2;
  float* packed = reinterpret_cast<float*>(out);
  constexpr __mmask16 kTileLanes = (1u << kTileRows) - 1;
  if (transA) {
    // op(A)[i][k] = a[k lda + i]: each pair from two rows of a.
    const __m512i interleave = _mm512_load_si512(kInterleave);
    for (int64_t it = 0; it < rows; it += kTileRows) {
      float* tile = packed + it * pairs;
      const __mmask16 mask = firstLanes(std::min<int64_t>(kTileRows, rows - it));
      for (int64_t p = 0; p < pairs; ++p) {
        const float* row0 = a + (k0 + 2 * p) * lda + i0 + it;
        const float* row1 = 2 * p + 1 < depth ? row0 + lda : nullptr;
        _mm512_mask_storeu_ps(tile + p * kTileRows, kTileLanes, pairRows(row0, row1, mask, interleave));
      }
    }
    return;
  }
  // op(A)[i][k] = a[i lda + k]: the tile's 12 rows of 32 k at a time, transposed into 16 pairs.
  __m512 r[16];
  for (int64_t it = 0; it < rows; it += kTileRows) {
    float* tile = packed + it * pairs;
    const int64_t lines = std::min<int64_t>(kTileRows, rows - it);
    for (int64_t p0 = 0; p0 < pairs; p0 += 16) {
      pairLines(a + (i0 + it) * lda + k0 + 2 * p0, lda, lines, depth - 2 * p0, r);
      const int64_t count = std::min<int64_t>(16, pairs - p0);
      for (int64_t q = 0; q < count; ++q) _mm512_mask_storeu_ps(tile + (p0 + q) * kTileRows, kTileLanes, r[q]);
    }
  }
}

// C's tile of `rows` x `cols` (at most 12 x 32) at c = alpha times the sums over `pairs` pairs of
// an A tile and a B panel, plus beta C where beta is not 0 (C is not read where it is).
NN_BF16_KERNEL void tile(const uint32_t* a, const uint32_t* b, int64_t pairs, int64_t rows, int64_t cols, float alpha,
                         float beta, float* c, int64_t ldc) {
  __m512 sums[kTileRows][2];
#pragma GCC unroll 12
  for (int r = 0; r < kTileRows; ++r) sums[r][0] = sums[r][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < pairs; ++p, a += kTileRows, b += kTileColumns) {
    const __m512bh b0 = (__m512bh)_mm512_load_si512(b), b1 = (__m512bh)_mm512_load_si512(b + 16);
#pragma GCC unroll 12
    for (int r = 0; r < kTileRows; ++r) {
      const __m512bh x = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[r]));
      sums[r][0] = _mm512_dpbf16_ps(sums[r][0], b0, x);
      sums[r][1] = _mm512_dpbf16_ps(sums[r][1], b1, x);
    }
  }
  const __mmask16 m0 = firstLanes(cols), m1 = firstLanes(cols - 16);
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
  for (int r = 0; r < kTileRows; ++r) {
    if (r >= rows) break;
    float* row = c + r * ldc;
    __m512 y0 = _mm512_mul_ps(va, sums[r][0]), y1 = _mm512_mul_ps(va, sums[r][1]);
    if (beta != 0) {
      y0 = _mm512_add_ps(y0, _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(m0, row)));
      y1 = _mm512_add_ps(y1, _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(m1, row + 16)));
    }
    _mm512_mask_storeu_ps(row, m0, y0);
    _mm512_mask_storeu_ps(row + 16, m1, y1);
  }
}

void product(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
             const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  uint32_t* pa = packedA.get(kRowBlock * kDepth / 2);
  uint32_t* pb = packedB.get(kColumnBlock * kDepth / 2);
  for (int64_t k0 = 0; k0 < k; k0 += kDepth) {
    const int64_t depth = std::min(kDepth, k - k0), pairs = (depth + 1) / 2;
    // The first block scales C by beta; the others add to it.
    const float blockBeta = k0 == 0 ? beta : 1.f;
    for (int64_t j0 = 0; j0 < n; j0 += kColumnBlock) {
      const int64_t cols = std::min(kColumnBlock, n - j0);
      packPanels(transB, b, ldb, k0, j0, depth, cols, pairs, pb);
      for (int64_t i0 = 0; i0 < m; i0 += kRowBlock) {
        const int64_t rows = std::min(kRowBlock, m - i0);
        packA(transA, a, lda, i0, k0, rows, depth, pa);
        for (int64_t jp = 0; jp < cols; jp += kTileColumns)
          for (int64_t it = 0; it < rows; it += kTileRows)
            tile(pa + it * pairs, pb + jp * pairs, pairs, std::min<int64_t>(kTileRows, rows - it),
                 std::min<int64_t>(kTileColumns, cols - jp), alpha, blockBeta, c + (i0 + it) * ldc + j0 + jp, ldc);
      }
    }
  }
}

}  // namespace

#else

namespace {

// Never reached: bf16GemmRuns() is false in a build without the kernel, and bf16Gemm stops there.
void product(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float, float*,
             int64_t) {}

}  // namespace

#endif

bool bf16GemmRuns() { return NN_AVX512 && cpuFeatures().avx512bf16 && isaAtLeast(Isa::avx512); }

std::string bf16GemmMissing() {
  if (bf16GemmRuns()) return "";
  const CpuFeatures& cpu = cpuFeatures();
  const std::string features = featureNames(cpu);
  const std::string has = "this CPU (" + (features.empty() ? std::string("none of AVX2, AVX-512") : features) + ")";
  if (!NN_AVX512)
    return "bfloat16 products need AVX512-BF16 kernels, which this build has not (GCC on x86-64 has them)";
  if (!cpu.avx512bf16)
    return "bfloat16 products need AVX512-BF16, which " + has + " lacks (its kernels' level: " + isaName(isa()) + ")";
  return std::string("bfloat16 products need the kernels' level avx512, and this run has ") + isaName(isa()) + " (" +
         has + " runs " + isaName(machineIsa()) + "; NN_CPU_ISA lowers it)";
}

const char* bf16GemmKernel() { return amxGemmRuns() ? "AMX" : bf16GemmRuns() ? "AVX512-BF16" : ""; }

void avx512Bf16Gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  checkSizes("nn::cpu::avx512Bf16Gemm", m, n, k);
  NN_CHECK(bf16GemmRuns(), "nn::cpu::avx512Bf16Gemm: " << bf16GemmMissing());
  if (!productsLeft(m, n, k, beta, c, ldc)) return;
  product(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void bf16Gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
              const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  checkSizes("nn::cpu::bf16Gemm", m, n, k);
  NN_CHECK(bf16GemmRuns(), "nn::cpu::bf16Gemm: " << bf16GemmMissing());
  if (amxGemmRuns()) return amxGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (!productsLeft(m, n, k, beta, c, ldc)) return;
  product(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace nn::cpu
