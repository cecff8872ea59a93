// bf16Gemm (Bf16Gemm.h): operands packed as bfloat16 pairs, tiles of 12 x 32 sums in AVX-512
// registers (Note [bfloat16 GEMM]).
#include "nn/cpu/Bf16Gemm.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "nn/core/Error.h"
#include "nn/cpu/Avx512.h"
#include "nn/cpu/CpuFeatures.h"
#include "nn/cpu/Isa.h"

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

#define NN_BF16_KERNEL \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16"), optimize("no-predictive-commoning")))

constexpr int kTileRows = 12;
constexpr int kTileColumns = 32;
// k of a block, even: each block's pairs are its own.
constexpr int64_t kDepth = 256;
constexpr int64_t kRowBlock = 8 * kTileRows;
constexpr int64_t kColumnBlock = 16 * kTileColumns;

// 64-byte aligned 32-bit lanes, grown to the largest need and kept.
class Lanes {
 public:
  uint32_t* get(size_t count) {
    if (count > size_) {
      const size_t bytes = (count * sizeof(uint32_t) + 63) / 64 * 64;
      data_.reset(static_cast<uint32_t*>(std::aligned_alloc(64, bytes)));
      NN_CHECK(data_ != nullptr, "nn::cpu::bf16Gemm: out of memory packing " << bytes << " bytes");
      size_ = count;
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(uint32_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint32_t, Free> data_;
  size_t size_ = 0;
};

thread_local Lanes packedA, packedB;

// vpermw's indices that interleave the two halves of a vector of 32 bfloat16 values: lane 2i from
// the lower half, 2i + 1 from the upper.
alignas(64) const uint16_t kInterleave[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
                                              8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};

// Pairs from two rows of a matrix stored by rows along the pairs' other index: lane i holds
// row0[i] in its lower half and row1[i] (zero where row1 is null) in its upper, for the lanes of
// `mask`, zeros elsewhere.
NN_BF16_KERNEL inline __attribute__((always_inline)) __m512 pairRows(const float* row0, const float* row1,
                                                                     __mmask16 mask, __m512i interleave) {
  const __m512 x0 = _mm512_maskz_loadu_ps(mask, row0);
  const __m512 x1 = row1 ? _mm512_maskz_loadu_ps(mask, row1) : _mm512_setzero_ps();
  return _mm512_castsi512_ps(_mm512_permutexvar_epi16(interleave, (__m512i)_mm512_cvtne2ps_pbh(x1, x0)));
}

// Pairs from up to 16 lines stored along k (line l at src + l * ld, its first `depth` values, at
// most 32 of them, read; zeros past them and for lines from `lines` on): r[q] holds pair q of line l
// in lane l.
NN_BF16_KERNEL inline __attribute__((always_inline)) void pairLines(const float* src, int64_t ld, int64_t lines,
                                                                    int64_t depth, __m512* r) {
  const __mmask16 low = firstLanes(depth), high = firstLanes(depth - 16);
  for (int l = 0; l < 16; ++l)
    r[l] = l < lines ? (__m512)_mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(high, src + l * ld + 16),
                                                   _mm512_maskz_loadu_ps(low, src + l * ld))
                     : _mm512_setzero_ps();
  transpose16(r);
}

// The block of op(B) of `depth` k from k0 and `cols` columns from j0, as panels of 32 columns:
// panel[pair][32 lanes], zeros past the block's columns and k.
NN_BF16_KERNEL void packB(bool transB, const float* b, int64_t ldb, int64_t k0, int64_t j0, int64_t depth, int64_t cols,
                          uint32_t* out) {
  const int64_t pairs = (depth + 1) / 2;
  float* packed = reinterpret_cast<float*>(out);
  if (!transB) {
    // op(B)[k][j] = b[k ldb + j]: each pair from two rows of b.
    const __m512i interleave = _mm512_load_si512(kInterleave);
    for (int64_t jp = 0; jp < cols; jp += kTileColumns) {
      float* panel = packed + jp * pairs;
      for (int h = 0; h < 2; ++h) {
        const __mmask16 mask = firstLanes(cols - jp - 16 * h);
        for (int64_t p = 0; p < pairs; ++p) {
          const float* row0 = b + (k0 + 2 * p) * ldb + j0 + jp + 16 * h;
          const float* row1 = 2 * p + 1 < depth ? row0 + ldb : nullptr;
          _mm512_store_ps(panel + p * kTileColumns + 16 * h, pairRows(row0, row1, mask, interleave));
        }
      }
    }
    return;
  }
  // op(B)[k][j] = b[j ldb + k]: 16 columns of 32 k at a time, transposed into 16 pairs.
  __m512 r[16];
  for (int64_t jp = 0; jp < cols; jp += kTileColumns) {
    float* panel = packed + jp * pairs;
    for (int h = 0; h < 2; ++h) {
      const int64_t j = jp + 16 * h, lines = std::min<int64_t>(16, cols - j);
      for (int64_t p0 = 0; p0 < pairs; p0 += 16) {
        pairLines(b + (j0 + j) * ldb + k0 + 2 * p0, ldb, lines, depth - 2 * p0, r);
        const int64_t count = std::min<int64_t>(16, pairs - p0);
        for (int64_t q = 0; q < count; ++q) _mm512_store_ps(panel + (p0 + q) * kTileColumns + 16 * h, r[q]);
      }
    }
  }
}

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
      packB(transB, b, ldb, k0, j0, depth, cols, pb);
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

void bf16Gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
              const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  NN_CHECK(m >= 0 && n >= 0 && k >= 0 && m < (int64_t{1} << 31) && n < (int64_t{1} << 31) && k < (int64_t{1} << 31),
           "nn::cpu::bf16Gemm: sizes out of range: m=" << m << " n=" << n << " k=" << k);
  NN_CHECK(bf16GemmRuns(), "nn::cpu::bf16Gemm: " << bf16GemmMissing());
  if (m == 0 || n == 0) return;
  if (k == 0) {
    // No products: C = beta C, where beta 0 reads nothing.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0 ? 0.f : beta * c[i * ldc + j];
    return;
  }
  product(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace nn::cpu
