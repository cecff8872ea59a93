// The packing shared by the bfloat16 GEMMs (Bf16Gemm.cpp's vdpbf16ps kernel, AmxGemm.cpp's tiles):
// float32 operands rounded to bfloat16 by vcvtne2ps2bf16 and laid out as pairs of consecutive k,
// each pair one 32-bit lane, the layout both vdpbf16ps and AMX's tdpbf16ps multiply (Note
// [bfloat16 GEMM], Bf16Gemm.cpp); and the calling thread's packing buffers. GCC on x86-64 only
// (NN_AVX512, Avx512.h).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "nn/cpu/Avx512.h"
#include "nn/tensor/Error.h"

namespace nn::cpu {

// 64-byte aligned 32-bit lanes, grown to the largest need and kept.
class Lanes {
 public:
  uint32_t* get(size_t count) {
    if (count > size_) {
      const size_t bytes = (count * sizeof(uint32_t) + 63) / 64 * 64;
      data_.reset(static_cast<uint32_t*>(std::aligned_alloc(64, bytes)));
      NN_CHECK(data_ != nullptr, "nn::cpu bfloat16 GEMM: out of memory packing " << bytes << " bytes");
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

/// An nn::Error naming `who` where a size is negative or beyond an int, as nn::blas::gemm's.
inline void checkSizes(const char* who, int64_t m, int64_t n, int64_t k) {
  NN_CHECK(m >= 0 && n >= 0 && k >= 0 && m < (int64_t{1} << 31) && n < (int64_t{1} << 31) && k < (int64_t{1} << 31),
           who << ": sizes out of range: m=" << m << " n=" << n << " k=" << k);
}

/// Whether a product C = alpha op(A) op(B) + beta C of these sizes has products to sum: false
/// where C is empty, or where k is 0, after C = beta C (beta 0 reads nothing of C).
inline bool productsLeft(int64_t m, int64_t n, int64_t k, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return false;
  if (k > 0) return true;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0 ? 0.f : beta * c[i * ldc + j];
  return false;
}

#if NN_AVX512

#define NN_BF16_KERNEL \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16"), optimize("no-predictive-commoning")))

// vpermw's indices that interleave the two halves of a vector of 32 bfloat16 values: lane 2i from
// the lower half, 2i + 1 from the upper.
alignas(64) inline constexpr uint16_t kInterleave[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
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

// 16 pairs of a line stored along k: its first `depth` values from `src` (at most 32 read), zeros
// past them.
NN_BF16_KERNEL inline __attribute__((always_inline)) __m512 pairLine(const float* src, int64_t depth) {
  return (__m512)_mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(firstLanes(depth - 16), src + 16),
                                     _mm512_maskz_loadu_ps(firstLanes(depth), src));
}

// Pairs from up to 16 lines stored along k (line l at src + l * ld, its first `depth` values, at
// most 32 of them, read; zeros past them and for lines from `lines` on): r[q] holds pair q of line l
// in lane l.
NN_BF16_KERNEL inline __attribute__((always_inline)) void pairLines(const float* src, int64_t ld, int64_t lines,
                                                                    int64_t depth, __m512* r) {
  for (int l = 0; l < 16; ++l) r[l] = l < lines ? pairLine(src + l * ld, depth) : _mm512_setzero_ps();
  transpose16(r);
}

// The block of op(B) (op(B)[k][j] = b[k ldb + j], or b[j ldb + k] where transB) of `depth` k from
// k0 and `cols` columns from j0, as panels of 32 columns: panel p at out + 32 p stride lanes holds
// pair q of its columns at lanes [32 q, 32 q + 32), for q < stride (at least (depth + 1) / 2),
// zeros past the block's columns and k.
NN_BF16_KERNEL inline void packPanels(bool transB, const float* b, int64_t ldb, int64_t k0, int64_t j0, int64_t depth,
                                      int64_t cols, int64_t stride, uint32_t* out) {
  constexpr int64_t kWidth = 32;
  const int64_t pairs = (depth + 1) / 2;
  float* packed = reinterpret_cast<float*>(out);
  for (int64_t jp = 0; jp < cols; jp += kWidth)
    for (int64_t q = pairs; q < stride; ++q) {
      _mm512_store_ps(packed + jp * stride + q * kWidth, _mm512_setzero_ps());
      _mm512_store_ps(packed + jp * stride + q * kWidth + 16, _mm512_setzero_ps());
    }
  if (!transB) {
    // Each pair from two rows of b.
    const __m512i interleave = _mm512_load_si512(kInterleave);
    for (int64_t jp = 0; jp < cols; jp += kWidth) {
      float* panel = packed + jp * stride;
      for (int h = 0; h < 2; ++h) {
        const __mmask16 mask = firstLanes(cols - jp - 16 * h);
        for (int64_t p = 0; p < pairs; ++p) {
          const float* row0 = b + (k0 + 2 * p) * ldb + j0 + jp + 16 * h;
          const float* row1 = 2 * p + 1 < depth ? row0 + ldb : nullptr;
          _mm512_store_ps(panel + p * kWidth + 16 * h, pairRows(row0, row1, mask, interleave));
        }
      }
    }
    return;
  }
  // 16 columns of 32 k at a time, transposed into 16 pairs.
  __m512 r[16];
  for (int64_t jp = 0; jp < cols; jp += kWidth) {
    float* panel = packed + jp * stride;
    for (int h = 0; h < 2; ++h) {
      const int64_t j = jp + 16 * h, lines = std::min<int64_t>(16, cols - j);
      for (int64_t p0 = 0; p0 < pairs; p0 += 16) {
        pairLines(b + (j0 + j) * ldb + k0 + 2 * p0, ldb, lines, depth - 2 * p0, r);
        const int64_t count = std::min<int64_t>(16, pairs - p0);
        for (int64_t q = 0; q < count; ++q) _mm512_store_ps(panel + (p0 + q) * kWidth + 16 * h, r[q]);
      }
    }
  }
}

#endif

}  // namespace nn::cpu
