// What the AMX kernels share (AmxGemm.cpp, AmxTaps.cpp): the functions' target, the tiles'
// configuration, and the barrier that keeps stores before the tile intrinsics. GCC on x86-64 only
// (NN_AVX512, Avx512.h).
#pragma once

#include <cstdint>

#include "nn/cpu/Avx512.h"

#if NN_AVX512

#define NN_AMX_KERNEL                                                                       \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,amx-tile,amx-bf16"), \
                 optimize("no-predictive-commoning")))

namespace nn::cpu {

// ldtilecfg's 64 bytes: palette 1, and each tile's rows and bytes per row.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t startRow = 0;
  uint8_t reserved[14] = {};
  uint16_t rowBytes[16] = {};
  uint8_t rows[16] = {};
};

// GCC's tile intrinsics are asm statements that tell the compiler of no memory they read: this
// keeps the stores of the packing (and of the configuration) before them.
inline void memoryBarrier() { __asm__ volatile("" ::: "memory"); }

}  // namespace nn::cpu

#endif
