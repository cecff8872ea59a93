// A convolution's products summed over its taps (the kernel's positions) on AMX tiles, their
// operands read where they lie in the samples' padded planes, rounded to bfloat16 once, rather than
// unfolded: each tap's operand is the planes read from that tap's offset on (ConvolutionKernels.cpp,
// Note [Products over the taps]). As amxGemm (AmxGemm.h), the products of bfloat16 operands summed
// in float32 by tdpbf16ps; each call runs on the calling thread, which loads the tiles'
// configuration as it starts and releases the tiles as it ends. Only where amxGemmRuns().
#pragma once

#include <cstdint>

namespace nn::cpu {

// A pair: two bfloat16 values in 32 bits, the first of the two in the lower half (the layout
// tdpbf16ps multiplies: Note [AMX GEMM], AmxGemm.cpp).

/// c[i][j] = the sum over taps t < taps and pairs p < pairs of a[(t m + i) pairs + p] times
/// b[p stride + offsets[t] + j], pair by pair, for i < m and j < n (c's rows ldc floats apart):
/// a holds each tap's m x pairs weights, b pair planes `stride` lanes apart. m a multiple of 16 and
/// pairs of 8; b is read up to offsets[t] + n rounded up to 32 lanes of each pair plane, the sums
/// past n dropped. An nn::Error where amxGemmRuns() is false or a size is out of range.
void amxTapsProduct(int64_t m, int64_t n, int64_t pairs, int64_t taps, const uint32_t* a, const uint32_t* b,
                    int64_t stride, const int64_t* offsets, float* c, int64_t ldc);

/// g[(t rows + i) cols + o] += the sum over j < n of a[i stride + offsets[t] + j] times row o of
/// the pairs b (pairColumns's layout, of `cols` lines): a weight gradient, [taps][rows][cols], from
/// the bfloat16 planes a (`stride` values apart) and the output's gradient. rows and cols multiples of
/// 16; a is read up to offsets[t] + n rounded up to 32 values, b's pairs past n must be zeros.
void amxTapsGradient(int64_t rows, int64_t cols, int64_t n, int64_t taps, const uint16_t* a, int64_t stride,
                     const int64_t* offsets, const uint32_t* b, float* g);

/// Where a sample's planes lie in a chunk's phase planes: pixel (y, x), padded to (yp, xp) =
/// (y + padH, x + padW), lies in phase (yp % d) d + xp % d at row yp / d and column xp / d; the
/// phases of a plane `phaseLanes` lanes apart, their rows `ld` lanes. d is the convolution's stride,
/// 1 or 2: the taps of a layer of stride 2 read its input's phases as a layer of stride 1 reads its
/// padded planes (ConvolutionKernels.cpp, Note [Products over the taps]).
struct PhasePlanes {
  int64_t d;
  int64_t padH;
  int64_t padW;
  int64_t phaseLanes;
  int64_t ld;
};

/// The float planes at `in`, [planes][height][width] (planes even), as pair planes in `to`'s
/// layout: pair plane p, at out + p stride, holds planes 2p and 2p + 1.
void pairPlanes(const float* in, int64_t planes, int64_t height, int64_t width, const PhasePlanes& to, uint32_t* out,
                int64_t stride);

/// The float planes at `in`, [planes][height][width], as bfloat16 in `to`'s layout: plane c at
/// out + c stride.
void bf16Planes(const float* in, int64_t planes, int64_t height, int64_t width, const PhasePlanes& to, uint16_t* out,
                int64_t stride);

/// The float planes [planes][height][width] at out from `of`'s layout, plane c at from + c stride:
/// a gradInput from the products of its phases. Of stride 2, each row's phases are read 16 lanes
/// at a time: up to 15 lanes past a row's last column (a phase's lanes leave room for them).
void fromPhases(const float* from, int64_t stride, const PhasePlanes& of, int64_t planes, int64_t height, int64_t width,
                float* out);

/// The pairs along `lines` rows of floats (a multiple of 16, ldg floats apart) for
/// amxTapsGradient's b: out[(j / 2) lines + l] = (g[l ldg + j], g[l ldg + j + 1]) for even j below n
/// rounded up to 32, zeros past n.
void pairColumns(const float* g, int64_t ldg, int64_t lines, int64_t n, uint32_t* out);

/// Planes of rows of `width` floats from one grid to another: to[i toPlane + y toRow + x] =
/// from[i fromPlane + y fromRow + x], plus add[i] where add is not null, for i < planes, y < height,
/// x < width: a chunk's sums on its grid to a sample's output planes, and a sample's gradOutput onto
/// the grid. Only where amxGemmRuns(), as the rest.
void copyPlanes(const float* from, int64_t fromPlane, int64_t fromRow, float* to, int64_t toPlane, int64_t toRow,
                int64_t planes, int64_t height, int64_t width, const float* add);

/// The amxTapsProduct and amxTapsGradient calls since the program started (a relaxed atomic
/// count), for the tests that a convolution took this route.
int64_t amxTapsCalls();

}  // namespace nn::cpu
