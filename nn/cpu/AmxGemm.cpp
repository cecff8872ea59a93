// amxGemm (AmxGemm.h): operands packed as bfloat16 pairs (Bf16Packing.h), blocks of 32 x 32 sums
// in four AMX tiles (Note [AMX GEMM]).
#include "nn/cpu/AmxGemm.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "nn/cpu/AmxTiles.h"
#include "nn/cpu/Avx512.h"
#include "nn/cpu/Bf16Gemm.h"
#include "nn/cpu/Bf16Packing.h"
#include "nn/cpu/CpuFeatures.h"
#include "nn/cpu/Isa.h"
#include "nn/tensor/Error.h"

// Note [AMX GEMM]
// An AMX tile register holds up to 16 rows of 64 bytes; tdpbf16ps adds to each float32 C[m][n] of
// one tile the products of row m of an A tile (16 pairs of bfloat16, 32 k) with column n of a B tile
// (16 rows, one per pair, of 16 columns' pairs): the layout of vdpbf16ps's operands (Note [bfloat16
// GEMM], Bf16Gemm.cpp), whose B panels of 32 columns serve as they are, two B tiles side by side
// at a row stride of 128 bytes. op(A) is packed by rows, each row's pairs contiguous (tile rows at
// a stride of the block's pairs). Of the eight tiles, four hold a 32 x 32 block of C's sums, two
// the A tiles of its 32 rows and two the B tiles of its 32 columns: each step of 32 k loads four
// tiles and runs four products. k runs in blocks of kDepth (A's 32 rows of a block, 32 KB, stay in
// the first-level cache while the B panels of a column block stream past them from the second),
// each padded with zero pairs to a multiple of 16 pairs, as rows past m and columns past n are
// zeros; a block's sums, stored from the tiles, are added to C (alpha times them, plus beta C for
// the first block) with AVX-512, so C is read and written once per block, or, where they are C's
// values (alpha 1, beta 0, the first block of k, a whole 32 x 32 block of C), stored there by the
// tiles. The rounding of the operands is vcvtne2ps2bf16's, as bf16Gemm's; tdpbf16ps rounds its
// sums to nearest even and flushes denormal sums to zero, below what a float32 sum of bfloat16
// products of normal values can notice. The configuration (palette 1, eight tiles of 16 rows of
// 64 bytes) is loaded by each call on its thread and the tiles released at its end, so a thread
// that has run amxGemm holds no tile state between calls.

namespace nn::cpu {

namespace {

std::atomic<int64_t> calls{0};
std::atomic<bool> allowed{true};

// Linux's arch_prctl request for a state component, and AMX's tile data, component 18
// (asm/prctl.h, the kernel's x86 xstate documentation).
constexpr int kRequestPermission = 0x1023;
constexpr int kTileData = 18;

// Whether Linux lets this process use the tile data: asked once per process, the permission then
// holding for all of its threads.
bool tilesPermitted() {
  static const bool granted = [] {
#if defined(__linux__) && defined(__x86_64__)
    return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
#else
    return false;
#endif
  }();
  return granted;
}

#if NN_AVX512

// C's rows and columns per block of four tiles; pairs (of k) per tile.
constexpr int64_t kBlock = 32;
constexpr int64_t kTilePairs = 16;
// k of a block, even; rows of op(A) and columns of op(B) packed at a time.
constexpr int64_t kDepth = 512;
constexpr int64_t kRowBlock = 256;
constexpr int64_t kColumnBlock = 512;

thread_local Lanes packedA, packedB;

// The block of op(A) (op(A)[i][k] = a[i lda + k], or aRows[i][k] where aRows is not null, or
// a[k lda + i] where transA) of `rows` rows from i0 and `depth` k from k0: row r's pairs at out +
// r stride, `stride` (a multiple of 16, at least (depth + 1) / 2) of them; zeros past the block's
// k, and in the rows from `rows` to the next multiple of 32.
NN_AMX_KERNEL void packRows(bool transA, const float* a, int64_t lda, const float* const* aRows, int64_t i0, int64_t k0,
                            int64_t rows, int64_t depth, int64_t stride, uint32_t* out) {
  const int64_t padded = (rows + kBlock - 1) / kBlock * kBlock;
  float* packed = reinterpret_cast<float*>(out);
  if (!transA) {
    for (int64_t r = 0; r < padded; ++r) {
      float* row = packed + r * stride;
      const int64_t i = i0 + std::min(r, rows - 1);
      const float* src = (aRows ? aRows[i] : a + i * lda) + k0;
      for (int64_t q = 0; q < stride; q += 16)
        _mm512_store_ps(row + q, r < rows ? pairLine(src + 2 * q, depth - 2 * q) : _mm512_setzero_ps());
    }
    return;
  }
  // Each pair from two rows of a, 16 rows of op(A) at a time, transposed.
  const __m512i interleave = _mm512_load_si512(kInterleave);
  __m512 v[16];
  for (int64_t r0 = 0; r0 < padded; r0 += 16) {
    const __mmask16 mask = firstLanes(rows - r0);
    for (int64_t q0 = 0; q0 < stride; q0 += 16) {
      for (int q = 0; q < 16; ++q) {
        const int64_t kk = 2 * (q0 + q);
        if (kk >= depth || mask == 0) {
          v[q] = _mm512_setzero_ps();
          continue;
        }
        const float* row0 = a + (k0 + kk) * lda + i0 + r0;
        v[q] = pairRows(row0, kk + 1 < depth ? row0 + lda : nullptr, mask, interleave);
      }
      transpose16(v);
      for (int i = 0; i < 16; ++i) _mm512_store_ps(packed + (r0 + i) * stride + q0, v[i]);
    }
  }
}

// packPanels' block of op(B) (Bf16Packing.h) where row kk of op(B) is at rows[kk]: each pair from
// two of those rows.
NN_AMX_KERNEL void packPanelRows(const float* const* rows, int64_t k0, int64_t j0, int64_t depth, int64_t cols,
                                 int64_t stride, uint32_t* out) {
  constexpr int64_t kWidth = 2 * kTilePairs;
  const int64_t pairs = (depth + 1) / 2;
  float* packed = reinterpret_cast<float*>(out);
  const __m512i interleave = _mm512_load_si512(kInterleave);
  for (int64_t jp = 0; jp < cols; jp += kWidth) {
    float* panel = packed + jp * stride;
    for (int64_t q = pairs; q < stride; ++q) {
      _mm512_store_ps(panel + q * kWidth, _mm512_setzero_ps());
      _mm512_store_ps(panel + q * kWidth + 16, _mm512_setzero_ps());
    }
    for (int h = 0; h < 2; ++h) {
      const __mmask16 mask = firstLanes(cols - jp - 16 * h);
      const int64_t j = j0 + jp + 16 * h;
      for (int64_t p = 0; p < pairs; ++p) {
        const float* row1 = 2 * p + 1 < depth ? rows[k0 + 2 * p + 1] + j : nullptr;
        _mm512_store_ps(panel + p * kWidth + 16 * h, pairRows(rows[k0 + 2 * p] + j, row1, mask, interleave));
      }
    }
  }
}

// sums[32][32] (row stride `ld` floats) = the products over `steps` steps of 16 pairs of the 32
// packed rows at `a` (row stride `stride` pairs) and the B panel at `b`. Where `lower` or `right`
// is false, the 16 rows or columns of that half lie past C's and their tiles are left out (their
// sums are not written).
NN_AMX_KERNEL void multiplyBlock(const uint32_t* a, const uint32_t* b, int64_t stride, int64_t steps, bool lower,
                                 bool right, float* sums, int64_t ld) {
  const int64_t aBytes = stride * static_cast<int64_t>(sizeof(uint32_t));
  const uint32_t* a1 = a + kTilePairs * stride;
  constexpr int64_t kPanelBytes = 2 * kTilePairs * static_cast<int64_t>(sizeof(uint32_t));
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t s = 0; s < steps; ++s) {
    const uint32_t* bs = b + s * kTilePairs * 2 * kTilePairs;
    _tile_loadd(4, a + s * kTilePairs, aBytes);
    _tile_loadd(6, bs, kPanelBytes);
    _tile_dpbf16ps(0, 4, 6);
    if (right) {
      _tile_loadd(7, bs + kTilePairs, kPanelBytes);
      _tile_dpbf16ps(1, 4, 7);
    }
    if (lower) {
      _tile_loadd(5, a1 + s * kTilePairs, aBytes);
      _tile_dpbf16ps(2, 5, 6);
      if (right) _tile_dpbf16ps(3, 5, 7);
    }
  }
  const int64_t rowBytes = ld * static_cast<int64_t>(sizeof(float));
  _tile_stored(0, sums, rowBytes);
  if (right) _tile_stored(1, sums + 16, rowBytes);
  if (lower) _tile_stored(2, sums + 16 * ld, rowBytes);
  if (lower && right) _tile_stored(3, sums + 16 * ld + 16, rowBytes);
}

// C's block of `rows` x `cols` (at most 32 x 32) at c = alpha sums, plus beta C where beta is not 0
// (C is not read where it is).
NN_AMX_KERNEL void addBlock(const float* sums, int64_t rows, int64_t cols, float alpha, float beta, float* c,
                            int64_t ldc) {
  const __mmask16 m0 = firstLanes(cols), m1 = firstLanes(cols - 16);
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  for (int64_t r = 0; r < rows; ++r) {
    float* row = c + r * ldc;
    __m512 y0 = _mm512_mul_ps(va, _mm512_load_ps(sums + r * kBlock));
    __m512 y1 = _mm512_mul_ps(va, _mm512_load_ps(sums + r * kBlock + 16));
    if (beta != 0) {
      y0 = _mm512_add_ps(y0, _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(m0, row)));
      y1 = _mm512_add_ps(y1, _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(m1, row + 16)));
    }
    _mm512_mask_storeu_ps(row, m0, y0);
    _mm512_mask_storeu_ps(row + 16, m1, y1);
  }
}

// C = alpha op(A) op(B) + beta C, op(A)'s rows at aRows[i] where aRows is not null, op(B)'s rows at
// bRows[kk] where bRows is not null.
NN_AMX_KERNEL void product(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                           int64_t lda, const float* const* aRows, const float* b, int64_t ldb,
                           const float* const* bRows, float beta, float* c, int64_t ldc) {
  uint32_t* pa = packedA.get(kRowBlock * kDepth / 2);
  uint32_t* pb = packedB.get(kColumnBlock * kDepth / 2);
  alignas(64) float sums[kBlock * kBlock];
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.rows[t] = 16;
    config.rowBytes[t] = 64;
  }
  memoryBarrier();
  _tile_loadconfig(&config);
  for (int64_t k0 = 0; k0 < k; k0 += kDepth) {
    const int64_t depth = std::min(kDepth, k - k0);
    const int64_t stride = ((depth + 1) / 2 + kTilePairs - 1) / kTilePairs * kTilePairs;
    // The first block scales C by beta; the others add to it.
    const float blockBeta = k0 == 0 ? beta : 1.f;
    // Rows of op(A) that fit one block are packed once for all of op(B)'s column blocks.
    const bool packedOnce = m <= kRowBlock;
    if (packedOnce) packRows(transA, a, lda, aRows, 0, k0, m, depth, stride, pa);
    for (int64_t j0 = 0; j0 < n; j0 += kColumnBlock) {
      const int64_t cols = std::min(kColumnBlock, n - j0);
      if (bRows)
        packPanelRows(bRows, k0, j0, depth, cols, stride, pb);
      else
        packPanels(transB, b, ldb, k0, j0, depth, cols, stride, pb);
      for (int64_t i0 = 0; i0 < m; i0 += kRowBlock) {
        const int64_t rows = std::min(kRowBlock, m - i0);
        if (!packedOnce) packRows(transA, a, lda, aRows, i0, k0, rows, depth, stride, pa);
        memoryBarrier();
        for (int64_t it = 0; it < rows; it += kBlock)
          for (int64_t jp = 0; jp < cols; jp += kBlock) {
            float* block = c + (i0 + it) * ldc + j0 + jp;
            // A whole block of C that is the sums alone: the tiles store them there.
            if (alpha == 1.f && blockBeta == 0.f && rows - it >= kBlock && cols - jp >= kBlock) {
              multiplyBlock(pa + it * stride, pb + jp * stride, stride, stride / kTilePairs, true, true, block, ldc);
              continue;
            }
            multiplyBlock(pa + it * stride, pb + jp * stride, stride, stride / kTilePairs, rows - it > 16,
                          cols - jp > 16, sums, kBlock);
            addBlock(sums, std::min(kBlock, rows - it), std::min(kBlock, cols - jp), alpha, blockBeta, block, ldc);
          }
      }
    }
  }
  _tile_release();
}

#else

// Never reached: amxGemmRuns() is false in a build without the kernel, and amxGemm stops there.
void product(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float* const*, const float*,
             int64_t, const float* const*, float, float*, int64_t) {}

#endif

}  // namespace

bool amxGemmRuns() {
  return bf16GemmRuns() && cpuFeatures().amxBf16 && allowed.load(std::memory_order_relaxed) && tilesPermitted();
}

bool allowAmx(bool allow) { return allowed.exchange(allow, std::memory_order_relaxed); }

std::string amxGemmMissing() {
  if (amxGemmRuns()) return "";
  if (!bf16GemmRuns()) return bf16GemmMissing();
  if (!cpuFeatures().amxBf16) {
    const std::string features = featureNames(cpuFeatures());
    return "AMX products need AMX-TILE and AMX-BF16 with the tile state saved by the OS, which this CPU (" + features +
           ") lacks";
  }
  if (!allowed.load(std::memory_order_relaxed)) return "AMX products held off (nn::cpu::allowAmx(false))";
  return "AMX products need the tile data, which Linux did not grant this process (arch_prctl "
         "ARCH_REQ_XCOMP_PERM; Linux 5.16 or later grants it)";
}

void amxGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
             const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  checkSizes("nn::cpu::amxGemm", m, n, k);
  NN_CHECK(amxGemmRuns(), "nn::cpu::amxGemm: " << amxGemmMissing());
  if (!productsLeft(m, n, k, beta, c, ldc)) return;
  calls.fetch_add(1, std::memory_order_relaxed);
  product(transA, transB, m, n, k, alpha, a, lda, nullptr, b, ldb, nullptr, beta, c, ldc);
}

void amxGemmRows(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* const* bRows,
                 float beta, float* c, int64_t ldc) {
  checkSizes("nn::cpu::amxGemmRows", m, n, k);
  NN_CHECK(amxGemmRuns(), "nn::cpu::amxGemmRows: " << amxGemmMissing());
  if (!productsLeft(m, n, k, beta, c, ldc)) return;
  calls.fetch_add(1, std::memory_order_relaxed);
  product(false, false, m, n, k, alpha, a, lda, nullptr, nullptr, 0, bRows, beta, c, ldc);
}

void amxGemmRowsOfA(bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* const* aRows,
                    const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  checkSizes("nn::cpu::amxGemmRowsOfA", m, n, k);
  NN_CHECK(amxGemmRuns(), "nn::cpu::amxGemmRowsOfA: " << amxGemmMissing());
  if (!productsLeft(m, n, k, beta, c, ldc)) return;
  calls.fetch_add(1, std::memory_order_relaxed);
  product(false, transB, m, n, k, alpha, nullptr, 0, aRows, b, ldb, nullptr, beta, c, ldc);
}

int64_t amxGemmCalls() { return calls.load(std::memory_order_relaxed); }

}  // namespace nn::cpu
