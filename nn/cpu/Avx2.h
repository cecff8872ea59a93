// Helpers of our own AVX2 + FMA kernels (the AVX2 forms of the direct Linear products and of the
// direct and shallow convolutions): x86-64 only, where the build's baseline (x86-64-v3) has them;
// they run at the level avx2 and above (Isa.h). Each form sums each value in the same order as
// its AVX-512 form, so that the two give the same floats.
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#define NN_AVX2 1
#include <immintrin.h>
#else
#define NN_AVX2 0
#endif

// A kernel of unrolled tiles: GCC without predictive commoning, which keeps one tap's input
// values in registers for the next tap's overlapping reads and so spills the accumulators (as in
// Avx512.h's NN_AVX512_KERNEL).
#if defined(__GNUC__) && !defined(__clang__)
#define NN_AVX2_KERNEL __attribute__((optimize("no-predictive-commoning")))
#else
#define NN_AVX2_KERNEL
#endif

namespace nn::cpu {

#if NN_AVX2

/// The mask of the first n of 8 lanes (none for n <= 0, all for n >= 8), for _mm256_maskload_ps
/// and _mm256_maskstore_ps.
inline __m256i firstLanes8(int64_t n) {
  const int64_t k = n <= 0 ? 0 : n >= 8 ? 8 : n;
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(k)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// r[i]'s lane j to r[j]'s lane i.
inline __attribute__((always_inline)) void transpose8(__m256* r) {
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  __m256 u[8];
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  }
}

/// packed[block][c][R] = src[block * R + r][c] (r < R) for the blocks [begin, end) of src's rows
/// ([rows][cols]) in blocks of R, zeros for the rows past `rows`.
template <int64_t R>
void transposeBlocks8(const float* src, int64_t rows, int64_t cols, int64_t begin, int64_t end, float* packed) {
  for (int64_t block = begin; block < end; ++block) {
    float* out = packed + block * cols * R;
    for (int64_t r = 0; r < R; ++r) {
      const int64_t row = block * R + r;
      if (row < rows) {
        const float* in = src + row * cols;
        for (int64_t c = 0; c < cols; ++c) out[c * R + r] = in[c];
      } else {
        for (int64_t c = 0; c < cols; ++c) out[c * R + r] = 0.f;
      }
    }
  }
}

#endif

}  // namespace nn::cpu
