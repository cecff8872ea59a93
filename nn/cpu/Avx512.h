// Our own AVX-512 kernels (the direct convolution, the direct Linear products): GCC on x86-64
// only, intrinsics in functions built for AVX-512 alone, called at the level avx512 (Isa.h);
// elsewhere their AVX2 forms or, in the fuzz build (Clang), the OpenBLAS routes serve.
#pragma once

#include <algorithm>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NN_AVX512 1
#include <immintrin.h>
// Without predictive commoning: GCC 12 at -O2 keeps the input values of one tap in registers for
// the next tap's overlapping reads, which spills the accumulators to the stack.
#define NN_AVX512_KERNEL __attribute__((target("avx512f"), optimize("no-predictive-commoning")))
#else
#define NN_AVX512 0
#endif

namespace nn::cpu {

#if NN_AVX512

// r[i]'s lane j to r[j]'s lane i: the steps of _mm512_unpacklo_ps/_mm512_unpackhi_ps,
// _mm512_shuffle_ps and _mm512_shuffle_f32x4 as plain shuffles (GCC 12's headers of those
// intrinsics use an undefined vector, which it then warns of).
NN_AVX512_KERNEL inline __attribute__((always_inline)) void transpose16(__m512* r) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {  // pairs of rows interleaved, within each 4-lane group
    t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29);
    t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31);
  }
  for (int i = 0; i < 16; i += 4) {  // 4x4 blocks within each 4-lane group
    r[i] = __builtin_shufflevector(t[i], t[i + 2], 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
    r[i + 1] = __builtin_shufflevector(t[i], t[i + 2], 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
    r[i + 2] = __builtin_shufflevector(t[i + 1], t[i + 3], 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
    r[i + 3] = __builtin_shufflevector(t[i + 1], t[i + 3], 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
  }
  for (int i = 0; i < 16; i += 8)  // 4-lane groups: even ones, then odd ones, of two rows
    for (int j = 0; j < 4; ++j) {
      t[i + j] =
          __builtin_shufflevector(r[i + j], r[i + j + 4], 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27);
      t[i + j + 4] =
          __builtin_shufflevector(r[i + j], r[i + j + 4], 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
    }
  for (int j = 0; j < 8; ++j) {
    r[j] = __builtin_shufflevector(t[j], t[j + 8], 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27);
    r[j + 8] = __builtin_shufflevector(t[j], t[j + 8], 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
  }
}

// The first n lanes (none for n <= 0, all for n >= 16).
NN_AVX512_KERNEL inline __mmask16 firstLanes(int64_t n) {
  return n >= 16 ? __mmask16(0xffff) : n <= 0 ? __mmask16(0) : static_cast<__mmask16>((1u << n) - 1);
}

// packed[block][c][R] = src[block * R + r][c] (r < R) for the blocks [begin, end) of src's rows
// ([rows][cols]) in blocks of R, each transposed, zeros for the rows past `rows` (a Linear's
// batch, a direct convolution's gradOutput planes).
template <int64_t R>
NN_AVX512_KERNEL void transposeBlocks(const float* src, int64_t rows, int64_t cols, int64_t begin, int64_t end,
                                      float* packed) {
  for (int64_t block = begin; block < end; ++block)
    for (int64_t g = 0; g < R; g += 16) {  // groups of up to 16 rows of the block
      const int64_t first = block * R + g, groupRows = std::min<int64_t>(16, R - g);
      for (int64_t c = 0; c < cols; c += 16) {
        const int64_t n = std::min<int64_t>(16, cols - c);
        __m512 r[16];
        for (int64_t i = 0; i < 16; ++i)
          r[i] = i < groupRows && first + i < rows ? _mm512_maskz_loadu_ps(firstLanes(n), src + (first + i) * cols + c)
                                                   : _mm512_setzero_ps();
        transpose16(r);
        for (int64_t j = 0; j < n; ++j)
          _mm512_mask_storeu_ps(packed + (block * cols + c + j) * R + g, firstLanes(groupRows), r[j]);
      }
    }
}

#endif

}  // namespace nn::cpu
