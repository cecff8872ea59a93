// amxTapsProduct and amxTapsGradient (AmxTaps.h): blocks of 32 x 32 sums in four AMX tiles, as
// amxGemm's (Note [AMX GEMM], AmxGemm.cpp), their operand tiles loaded from where they lie.
#include "nn/cpu/AmxTaps.h"

#include <algorithm>
#include <atomic>

#include "nn/cpu/AmxGemm.h"
#include "nn/cpu/AmxTiles.h"
#include "nn/cpu/Avx512.h"
#include "nn/cpu/Bf16Packing.h"
#include "nn/tensor/Error.h"

namespace nn::cpu {

namespace {

std::atomic<int64_t> calls{0};

#if NN_AVX512

// C's rows and columns per block of four tiles; the tiles' rows.
constexpr int64_t kBlock = 32;
constexpr int64_t kTileRows = 16;

// Tiles 0-3 hold a block's sums, 4 and 5 its two A tiles, 6 and 7 its two B tiles: A tiles of
// `aBytes` a row, B tiles of `bRows` rows.
NN_AMX_KERNEL void loadTiles(int64_t aBytes, int64_t bRows) {
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.rows[t] = kTileRows;
    config.rowBytes[t] = 64;
  }
  config.rowBytes[4] = config.rowBytes[5] = static_cast<uint16_t>(aBytes);
  config.rows[6] = config.rows[7] = static_cast<uint8_t>(bRows);
  memoryBarrier();
  _tile_loadconfig(&config);
}

// The block's sums in tiles 0-3 (1 and 3 where `right`, 2 and 3 where `lower`) stored at sums,
// `ld` floats a row.
NN_AMX_KERNEL void storeSums(bool lower, bool right, float* sums, int64_t ld) {
  const int64_t rowBytes = ld * static_cast<int64_t>(sizeof(float));
  _tile_stored(0, sums, rowBytes);
  if (right) _tile_stored(1, sums + 16, rowBytes);
  if (lower) _tile_stored(2, sums + 16 * ld, rowBytes);
  if (lower && right) _tile_stored(3, sums + 16 * ld + 16, rowBytes);
}

NN_AMX_KERNEL void zeroSums() {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
}

NN_AMX_KERNEL void tapsProduct(int64_t m, int64_t n, int64_t pairs, int64_t taps, const uint32_t* a, const uint32_t* b,
                               int64_t stride, const int64_t* offsets, float* c, int64_t ldc) {
  // Pairs a product: 16 (a tile's 64 bytes of A's row) where they divide the pairs, else 8.
  const int64_t step = pairs % 16 == 0 ? 16 : 8;
  const int64_t aBytes = pairs * static_cast<int64_t>(sizeof(uint32_t));
  const int64_t bBytes = stride * static_cast<int64_t>(sizeof(uint32_t));
  loadTiles(step * static_cast<int64_t>(sizeof(uint32_t)), step);
  alignas(64) float sums[kBlock * kBlock];
  // Each block of columns' B tiles, taps x pairs rows of 128 bytes, stay in the first-level cache
  // for the blocks of rows.
  for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
    const bool right = n - j0 > 16;
    for (int64_t i0 = 0; i0 < m; i0 += kBlock) {
      const bool lower = m - i0 > 16;
      zeroSums();
      for (int64_t t = 0; t < taps; ++t) {
        const uint32_t* at = a + (t * m + i0) * pairs;
        const uint32_t* bt = b + offsets[t] + j0;
        for (int64_t p = 0; p < pairs; p += step) {
          _tile_loadd(4, at + p, aBytes);
          _tile_loadd(6, bt + p * stride, bBytes);
          _tile_dpbf16ps(0, 4, 6);
          if (right) {
            _tile_loadd(7, bt + p * stride + 16, bBytes);
            _tile_dpbf16ps(1, 4, 7);
          }
          if (lower) {
            _tile_loadd(5, at + 16 * pairs + p, aBytes);
            _tile_dpbf16ps(2, 5, 6);
            if (right) _tile_dpbf16ps(3, 5, 7);
          }
        }
      }
      float* block = c + i0 * ldc + j0;
      // A whole block: the tiles store it in place; else through sums, the columns of C alone.
      if (n - j0 >= kBlock) {
        storeSums(lower, true, block, ldc);
        continue;
      }
      storeSums(lower, right, sums, kBlock);
      const __mmask16 m0 = firstLanes(n - j0), m1 = firstLanes(n - j0 - 16);
      for (int64_t r = 0; r < std::min(kBlock, m - i0); ++r) {
        _mm512_mask_storeu_ps(block + r * ldc, m0, _mm512_load_ps(sums + r * kBlock));
        _mm512_mask_storeu_ps(block + r * ldc + 16, m1, _mm512_load_ps(sums + r * kBlock + 16));
      }
    }
  }
  _tile_release();
}

NN_AMX_KERNEL void tapsGradient(int64_t rows, int64_t cols, int64_t n, int64_t taps, const uint16_t* a, int64_t stride,
                                const int64_t* offsets, const uint32_t* b, float* g) {
  const int64_t aBytes = stride * static_cast<int64_t>(sizeof(uint16_t));
  const int64_t bBytes = cols * static_cast<int64_t>(sizeof(uint32_t));
  // 32 values of j a product: A's rows of 64 bytes, B's 16 rows of pairs.
  const int64_t steps = (n + kBlock - 1) / kBlock;
  loadTiles(64, kTileRows);
  alignas(64) float sums[kBlock * kBlock];
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t i0 = 0; i0 < rows; i0 += kBlock) {
      const bool lower = rows - i0 > 16;
      const uint16_t* at = a + i0 * stride + offsets[t];
      for (int64_t o0 = 0; o0 < cols; o0 += kBlock) {
        const bool right = cols - o0 > 16;
        zeroSums();
        for (int64_t s = 0; s < steps; ++s) {
          const uint32_t* bs = b + s * kTileRows * cols + o0;
          _tile_loadd(4, at + s * kBlock, aBytes);
          _tile_loadd(6, bs, bBytes);
          _tile_dpbf16ps(0, 4, 6);
          if (right) {
            _tile_loadd(7, bs + 16, bBytes);
            _tile_dpbf16ps(1, 4, 7);
          }
          if (lower) {
            _tile_loadd(5, at + 16 * stride + s * kBlock, aBytes);
            _tile_dpbf16ps(2, 5, 6);
            if (right) _tile_dpbf16ps(3, 5, 7);
          }
        }
        storeSums(lower, right, sums, kBlock);
        const __mmask16 m0 = firstLanes(cols - o0), m1 = firstLanes(cols - o0 - 16);
        for (int64_t r = 0; r < std::min(kBlock, rows - i0); ++r) {
          float* row = g + (t * rows + i0 + r) * cols + o0;
          _mm512_mask_storeu_ps(row, m0,
                                _mm512_add_ps(_mm512_maskz_loadu_ps(m0, row), _mm512_load_ps(sums + r * kBlock)));
          _mm512_mask_storeu_ps(
              row + 16, m1, _mm512_add_ps(_mm512_maskz_loadu_ps(m1, row + 16), _mm512_load_ps(sums + r * kBlock + 16)));
        }
      }
    }
  _tile_release();
}

// Where row y of a plane starts in `to`'s layout: its phase row, (yp % d) d phases on, row yp / d;
// the columns then from xp = padW.
inline int64_t phaseRow(const PhasePlanes& to, int64_t y) {
  const int64_t yp = y + to.padH;
  return (yp % to.d) * to.d * to.phaseLanes + yp / to.d * to.ld;
}

// The lanes of v for the columns x0 .. x0 + 15 of a row (those of `mask`) to the row's phases at
// `row` (phaseRow), as Lane does: 32-bit lanes, or floats rounded to bfloat16.
template <typename Lane>
NN_BF16_KERNEL inline __attribute__((always_inline)) void storePhases(const PhasePlanes& to, int64_t x0, __mmask16 mask,
                                                                      __m512 v, typename Lane::Type* row) {
  const int64_t xp = x0 + to.padW;
  if (to.d == 1) {
    Lane::store(row + xp, mask, v);
    return;
  }
  // d = 2: the lanes of even xp to phase 0 of the row, of odd xp to phase 1, each packed.
  for (int64_t px = 0; px < 2; ++px) {
    const int64_t first = (px - xp) & 1;
    const __mmask16 lanes = mask & (first ? 0xAAAA : 0x5555);
    const int64_t count = __builtin_popcount(lanes);
    Lane::store(row + px * to.phaseLanes + (xp + first) / 2, firstLanes(count), _mm512_maskz_compress_ps(lanes, v));
  }
}

struct PairLane {
  using Type = uint32_t;
  NN_BF16_KERNEL static void store(uint32_t* at, __mmask16 mask, __m512 v) {
    _mm512_mask_storeu_ps(reinterpret_cast<float*>(at), mask, v);
  }
};

struct Bf16Lane {
  using Type = uint16_t;
  NN_BF16_KERNEL static void store(uint16_t* at, __mmask16 mask, __m512 v) {
    _mm256_mask_storeu_epi16(at, mask, (__m256i)_mm512_cvtneps_pbh(v));
  }
};

NN_BF16_KERNEL void pairPlanesOf(const float* in, int64_t planes, int64_t height, int64_t width, const PhasePlanes& to,
                                 uint32_t* out, int64_t stride) {
  const __m512i interleave = _mm512_load_si512(kInterleave);
  const int64_t plane = height * width;
  for (int64_t p = 0; p < planes / 2; ++p)
    for (int64_t y = 0; y < height; ++y) {
      const float* row0 = in + 2 * p * plane + y * width;
      uint32_t* row = out + p * stride + phaseRow(to, y);
      for (int64_t x = 0; x < width; x += 16) {
        const __mmask16 mask = firstLanes(width - x);
        storePhases<PairLane>(to, x, mask, pairRows(row0 + x, row0 + plane + x, mask, interleave), row);
      }
    }
}

NN_BF16_KERNEL void bf16PlanesOf(const float* in, int64_t planes, int64_t height, int64_t width, const PhasePlanes& to,
                                 uint16_t* out, int64_t stride) {
  for (int64_t c = 0; c < planes; ++c)
    for (int64_t y = 0; y < height; ++y) {
      const float* src = in + (c * height + y) * width;
      uint16_t* row = out + c * stride + phaseRow(to, y);
      for (int64_t x = 0; x < width; x += 16) {
        const __mmask16 mask = firstLanes(width - x);
        storePhases<Bf16Lane>(to, x, mask, _mm512_maskz_loadu_ps(mask, src + x), row);
      }
    }
}

// vpermt2ps's indices that interleave the phases of a row of stride 2 (phase 0 in the first
// operand, phase 1 in the second, both from column (x0 + padW) / 2): where x0 + padW is even,
// lane i from phase i % 2, column i / 2; where odd, from phase 1 - i % 2, column (i + 1) / 2.
alignas(64) constexpr int32_t kPhasesEven[16] = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23};
alignas(64) constexpr int32_t kPhasesOdd[16] = {16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23, 8};

NN_BF16_KERNEL void fromPhasesOf(const float* from, int64_t stride, const PhasePlanes& of, int64_t planes,
                                 int64_t height, int64_t width, float* out) {
  const __m512i order = _mm512_load_si512(of.padW % 2 == 0 ? kPhasesEven : kPhasesOdd);
  for (int64_t c = 0; c < planes; ++c)
    for (int64_t y = 0; y < height; ++y) {
      const float* row = from + c * stride + phaseRow(of, y);
      float* dst = out + (c * height + y) * width;
      for (int64_t x = 0; x < width; x += 16) {
        const __mmask16 mask = firstLanes(width - x);
        const int64_t xp = x + of.padW;
        if (of.d == 1) {
          _mm512_mask_storeu_ps(dst + x, mask, _mm512_maskz_loadu_ps(mask, row + xp));
          continue;
        }
        const __m512 even = _mm512_loadu_ps(row + xp / 2), odd = _mm512_loadu_ps(row + of.phaseLanes + xp / 2);
        _mm512_mask_storeu_ps(dst + x, mask, _mm512_permutex2var_ps(even, order, odd));
      }
    }
}

NN_BF16_KERNEL void pairColumnsOf(const float* g, int64_t ldg, int64_t lines, int64_t n, uint32_t* out) {
  __m512 r[16];
  for (int64_t j = 0; j < n; j += kBlock)
    for (int64_t l = 0; l < lines; l += 16) {
      pairLines(g + l * ldg + j, ldg, 16, n - j, r);
      for (int64_t q = 0; q < 16; ++q) _mm512_storeu_ps(reinterpret_cast<float*>(out + (j / 2 + q) * lines + l), r[q]);
    }
}

NN_AVX512_KERNEL void copyPlanesOf(const float* from, int64_t fromPlane, int64_t fromRow, float* to, int64_t toPlane,
                                   int64_t toRow, int64_t planes, int64_t height, int64_t width, const float* add) {
  for (int64_t i = 0; i < planes; ++i) {
    const __m512 a = _mm512_set1_ps(add ? add[i] : 0.f);
    for (int64_t y = 0; y < height; ++y) {
      const float* src = from + i * fromPlane + y * fromRow;
      float* dst = to + i * toPlane + y * toRow;
      for (int64_t x = 0; x < width; x += 16) {
        const __mmask16 mask = firstLanes(width - x);
        _mm512_mask_storeu_ps(dst + x, mask, _mm512_add_ps(_mm512_maskz_loadu_ps(mask, src + x), a));
      }
    }
  }
}

#else

// Never reached: amxGemmRuns() is false in a build without the kernels, and the calls stop there.
void tapsProduct(int64_t, int64_t, int64_t, int64_t, const uint32_t*, const uint32_t*, int64_t, const int64_t*, float*,
                 int64_t) {}
void tapsGradient(int64_t, int64_t, int64_t, int64_t, const uint16_t*, int64_t, const int64_t*, const uint32_t*,
                  float*) {}
void pairPlanesOf(const float*, int64_t, int64_t, int64_t, const PhasePlanes&, uint32_t*, int64_t) {}
void bf16PlanesOf(const float*, int64_t, int64_t, int64_t, const PhasePlanes&, uint16_t*, int64_t) {}
void fromPhasesOf(const float*, int64_t, const PhasePlanes&, int64_t, int64_t, int64_t, float*) {}
void pairColumnsOf(const float*, int64_t, int64_t, int64_t, uint32_t*) {}
void copyPlanesOf(const float*, int64_t, int64_t, float*, int64_t, int64_t, int64_t, int64_t, int64_t, const float*) {}

#endif

void checkRuns(const char* who) { NN_CHECK(amxGemmRuns(), who << ": " << amxGemmMissing()); }

void checkTaps(const char* who, int64_t taps) {
  NN_CHECK(taps >= 0 && taps < (int64_t{1} << 31), who << ": taps=" << taps << " out of range");
}

void checkPhases(const char* who, const PhasePlanes& p) {
  NN_CHECK(p.d == 1 || p.d == 2, who << ": stride " << p.d << ", expected 1 or 2");
}

}  // namespace

void amxTapsProduct(int64_t m, int64_t n, int64_t pairs, int64_t taps, const uint32_t* a, const uint32_t* b,
                    int64_t stride, const int64_t* offsets, float* c, int64_t ldc) {
  checkSizes("nn::cpu::amxTapsProduct", m, n, pairs);
  checkTaps("nn::cpu::amxTapsProduct", taps);
  NN_CHECK(m % 16 == 0 && pairs % 8 == 0 && stride < (int64_t{1} << 29),
           "nn::cpu::amxTapsProduct: m=" << m << " and pairs=" << pairs
                                         << " must be multiples of 16 and 8, and the stride=" << stride
                                         << " below 2^29 lanes");
  checkRuns("nn::cpu::amxTapsProduct");
  if (m == 0 || n == 0) return;
  calls.fetch_add(1, std::memory_order_relaxed);
  tapsProduct(m, n, pairs, taps, a, b, stride, offsets, c, ldc);
}

void amxTapsGradient(int64_t rows, int64_t cols, int64_t n, int64_t taps, const uint16_t* a, int64_t stride,
                     const int64_t* offsets, const uint32_t* b, float* g) {
  checkSizes("nn::cpu::amxTapsGradient", rows, cols, n);
  checkTaps("nn::cpu::amxTapsGradient", taps);
  NN_CHECK(rows % 16 == 0 && cols % 16 == 0 && cols < (int64_t{1} << 14) && stride < (int64_t{1} << 30),
           "nn::cpu::amxTapsGradient: rows=" << rows << " and cols=" << cols
                                             << " must be multiples of 16, cols below 2^14, and the stride=" << stride
                                             << " below 2^30 values");
  checkRuns("nn::cpu::amxTapsGradient");
  if (rows == 0 || cols == 0 || n == 0) return;
  calls.fetch_add(1, std::memory_order_relaxed);
  tapsGradient(rows, cols, n, taps, a, stride, offsets, b, g);
}

void pairPlanes(const float* in, int64_t planes, int64_t height, int64_t width, const PhasePlanes& to, uint32_t* out,
                int64_t stride) {
  checkRuns("nn::cpu::pairPlanes");
  checkPhases("nn::cpu::pairPlanes", to);
  pairPlanesOf(in, planes, height, width, to, out, stride);
}

void bf16Planes(const float* in, int64_t planes, int64_t height, int64_t width, const PhasePlanes& to, uint16_t* out,
                int64_t stride) {
  checkRuns("nn::cpu::bf16Planes");
  checkPhases("nn::cpu::bf16Planes", to);
  bf16PlanesOf(in, planes, height, width, to, out, stride);
}

void fromPhases(const float* from, int64_t stride, const PhasePlanes& of, int64_t planes, int64_t height, int64_t width,
                float* out) {
  checkRuns("nn::cpu::fromPhases");
  checkPhases("nn::cpu::fromPhases", of);
  fromPhasesOf(from, stride, of, planes, height, width, out);
}

void pairColumns(const float* g, int64_t ldg, int64_t lines, int64_t n, uint32_t* out) {
  checkRuns("nn::cpu::pairColumns");
  pairColumnsOf(g, ldg, lines, n, out);
}

void copyPlanes(const float* from, int64_t fromPlane, int64_t fromRow, float* to, int64_t toPlane, int64_t toRow,
                int64_t planes, int64_t height, int64_t width, const float* add) {
  checkRuns("nn::cpu::copyPlanes");
  copyPlanesOf(from, fromPlane, fromRow, to, toPlane, toRow, planes, height, width, add);
}

int64_t amxTapsCalls() { return calls.load(std::memory_order_relaxed); }

}  // namespace nn::cpu
