// The AVX-512 kernels written in its intrinsics alone (the bfloat16 GEMMs: Bf16Gemm.h, AmxGemm.h):
// GCC on x86-64 only, in functions built for AVX-512 alone, called at the level avx512 (Isa.h).
// The kernels of every level are written over Vec instead (Vec.h, VecLevels.h).
#pragma once

#include <cstdint>

#include "nn/cpu/Vec.h"

#if NN_VEC512
#define NN_AVX512 1
// Without predictive commoning: GCC 12 at -O2 keeps the input values of one tap in registers for
// the next tap's overlapping reads, which spills the accumulators to the stack.
#define NN_AVX512_KERNEL __attribute__((target("avx512f"), optimize("no-predictive-commoning")))
#else
#define NN_AVX512 0
#endif

namespace nn::cpu {

#if NN_AVX512

// r[i]'s lane j to r[j]'s lane i (Vec512::transpose).
NN_AVX512_KERNEL inline __attribute__((always_inline)) void transpose16(__m512* r) { Vec512::transpose(r); }

// The first n lanes (none for n <= 0, all for n >= 16).
NN_AVX512_KERNEL inline __mmask16 firstLanes(int64_t n) { return Vec512::firstLanes(n); }

#endif

}  // namespace nn::cpu
