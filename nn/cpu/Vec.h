// The vector types of our own CPU kernels (the direct and narrow Linear products, the direct and
// shallow convolutions): Vec512 (AVX-512, 16 floats) and Vec256 (AVX2 + FMA, 8 floats), the same
// operations on each, as PyTorch's aten/src/ATen/cpu/vec and ggml's simd-mappings.h. A kernel is
// written once over `Vec` and compiled once per level (VecLevels.h), its tile sizes chosen by
// Vec::kLanes and Vec::kRegisters. Operations that sum in a fixed order (laneSum) sum the same
// lanes in the same order on either type, so that both forms of a kernel give the same floats.
// x86-64 only: Vec256 with GCC or Clang (the build's baseline is x86-64-v3), Vec512 with GCC.
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#define NN_VEC256 1
#include <immintrin.h>
#else
#define NN_VEC256 0
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NN_VEC512 1
#else
#define NN_VEC512 0
#endif

// A tile kernel: a function of its own, not inlined into the loops that call it, where GCC 12
// would keep the loops' values in registers beside the tile's sums and spill some of the sums.
#define NN_VEC_TILE __attribute__((noinline))

namespace nn::cpu {

#if NN_VEC512

// Every operation inlined, compiled for AVX-512: it runs only inside the kernels that VecLevels.h
// compiles for it.
#define NN_VEC512_OP static inline __attribute__((target("avx512f"), always_inline))

/// 16 floats in one AVX-512 register; 32 registers.
struct Vec512 {
  using Reg = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  static constexpr int kRegisters = 32;

  NN_VEC512_OP Reg zero() { return _mm512_setzero_ps(); }
  NN_VEC512_OP Reg set1(float x) { return _mm512_set1_ps(x); }
  NN_VEC512_OP Reg broadcast(const float* p) { return _mm512_set1_ps(*p); }
  NN_VEC512_OP Reg load(const float* p) { return _mm512_loadu_ps(p); }
  NN_VEC512_OP void store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  /// The first n lanes (none for n <= 0, all for n >= 16).
  NN_VEC512_OP Mask firstLanes(int64_t n) {
    return n >= 16 ? Mask(0xffff) : n <= 0 ? Mask(0) : static_cast<Mask>((1u << n) - 1);
  }
  /// The lanes of `m` from p, zeros in the others.
  NN_VEC512_OP Reg load(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  /// The lanes of `m` to p, nothing written at the others.
  NN_VEC512_OP void store(float* p, Mask m, Reg v) { _mm512_mask_storeu_ps(p, m, v); }
  NN_VEC512_OP Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  /// a b + c, rounded once.
  NN_VEC512_OP Reg fmadd(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }

  /// The sum of the lanes: lanes i and i + 8 added, then i and i + 4, i + 2, i + 1 (plain
  /// shuffles: GCC 12's _mm512_reduce_add_ps uses an undefined vector, which it then warns of).
  NN_VEC512_OP float laneSum(Reg v) {
    v = _mm512_add_ps(v, __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
    v = _mm512_add_ps(v, __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11));
    v = _mm512_add_ps(v, __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
    v = _mm512_add_ps(v, __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14));
    return v[0];
  }

  /// r[i]'s lane j to r[j]'s lane i: the steps of _mm512_unpacklo_ps/_mm512_unpackhi_ps,
  /// _mm512_shuffle_ps and _mm512_shuffle_f32x4 as plain shuffles (GCC 12's headers of those
  /// intrinsics use an undefined vector, which it then warns of).
  NN_VEC512_OP void transpose(Reg* r) {
    Reg t[16];
    for (int i = 0; i < 16; i += 2) {  // pairs of rows interleaved, within each 4-lane group
      t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29);
      t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31);
    }
    for (int i = 0; i < 16; i += 4) {  // 4x4 blocks within each 4-lane group
      r[i] = __builtin_shufflevector(t[i], t[i + 2], 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
      r[i + 1] = __builtin_shufflevector(t[i], t[i + 2], 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
      r[i + 2] = __builtin_shufflevector(t[i + 1], t[i + 3], 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
      r[i + 3] =
          __builtin_shufflevector(t[i + 1], t[i + 3], 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
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
};

#undef NN_VEC512_OP

#endif

#if NN_VEC256

#define NN_VEC256_OP static inline __attribute__((always_inline))

/// 8 floats in one AVX register; 16 registers.
struct Vec256 {
  using Reg = __m256;
  using Mask = __m256i;
  static constexpr int kLanes = 8;
  static constexpr int kRegisters = 16;

  NN_VEC256_OP Reg zero() { return _mm256_setzero_ps(); }
  NN_VEC256_OP Reg set1(float x) { return _mm256_set1_ps(x); }
  NN_VEC256_OP Reg broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  NN_VEC256_OP Reg load(const float* p) { return _mm256_loadu_ps(p); }
  NN_VEC256_OP void store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  /// The first n lanes (none for n <= 0, all for n >= 8).
  NN_VEC256_OP Mask firstLanes(int64_t n) {
    const int64_t k = n <= 0 ? 0 : n >= 8 ? 8 : n;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(k)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  /// The lanes of `m` from p, zeros in the others.
  NN_VEC256_OP Reg load(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  /// The lanes of `m` to p, nothing written at the others.
  NN_VEC256_OP void store(float* p, Mask m, Reg v) { _mm256_maskstore_ps(p, m, v); }
  NN_VEC256_OP Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  /// a b + c, rounded once.
  NN_VEC256_OP Reg fmadd(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }

  /// The sum of the lanes: lanes i and i + 4 added, then i and i + 2, i + 1 (the steps of
  /// Vec512::laneSum after its first).
  NN_VEC256_OP float laneSum(Reg v) {
    v = _mm256_add_ps(v, _mm256_permute2f128_ps(v, v, 0x01));
    v = _mm256_add_ps(v, _mm256_permute_ps(v, _MM_SHUFFLE(1, 0, 3, 2)));
    v = _mm256_add_ps(v, _mm256_permute_ps(v, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm256_cvtss_f32(v);
  }

  /// r[i]'s lane j to r[j]'s lane i.
  NN_VEC256_OP void transpose(Reg* r) {
    Reg t[8];
    for (int i = 0; i < 8; i += 2) {
      t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    Reg u[8];
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
};

#undef NN_VEC256_OP

#endif

}  // namespace nn::cpu
