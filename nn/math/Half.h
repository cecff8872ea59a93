// The 16-bit floating-point formats and float32: IEEE binary16 (half, F16) and bfloat16 (BF16),
// bit for bit, for the host and the device. Every value of both formats is a float32 exactly,
// so the widening conversions round nothing; the narrowing one rounds to nearest, ties to even,
// as the hardware's conversions (vcvtneps2bf16, __float2bfloat16) do.
#pragma once

#include <stdint.h>
#include <string.h>  // memcpy: the bit casts of both the host and nvcc device code

#include "nn/math/HostDevice.h"

namespace nn::math {

NN_HD inline float floatFromBits(uint32_t bits) {
  float x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

NN_HD inline uint32_t bitsOfFloat(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  return bits;
}

/// bfloat16 is float32's upper half: sign, the same 8-bit exponent, 7 of its 23 mantissa bits.
NN_HD inline float bfloat16ToFloat(uint16_t bits) { return floatFromBits(static_cast<uint32_t>(bits) << 16); }

/// The bfloat16 nearest x, ties to even; a NaN stays a NaN (quiet, its sign kept), where
/// dropping the low half of its mantissa could leave infinity's bits.
NN_HD inline uint16_t floatToBfloat16(float x) {
  const uint32_t bits = bitsOfFloat(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  // Adding 0x7fff, plus one where the kept part is odd, carries into the kept part exactly when
  // the dropped part is over half, or half with the kept part odd; a carry out of the
  // mantissa raises the exponent, and the largest finite values round to infinity.
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

/// binary16: sign, a 5-bit exponent biased by 15, a 10-bit mantissa; exponent 0 holds zero
/// and the subnormals (mantissa * 2^-24), exponent 31 infinity and the NaNs.
NN_HD inline float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    // mantissa * 2^-24 is exact in float32 (an integer below 2^10 times a power of two).
    const float magnitude = static_cast<float>(mantissa) * floatFromBits(0x33800000u);  // 2^-24
    return floatFromBits(sign | bitsOfFloat(magnitude));
  }
  if (exponent == 31) return floatFromBits(sign | 0x7f800000u | (mantissa << 13));
  return floatFromBits(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

/// The binary16 nearest x, ties to even, as F16C's vcvtps2ph and CUDA's __float2half_rn round:
/// from 65520 (65504 plus half its last place) on, infinity; below 2^-14, the subnormals
/// (multiples of 2^-24), and zero below 2^-25 (2^-25 itself a tie, to zero); a NaN stays a
/// NaN (quiet, its sign and its payload's upper bits kept).
NN_HD inline uint16_t floatToHalf(float x) {
  const uint32_t bits = bitsOfFloat(x);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // 65520 and beyond, infinity
  if (magnitude >= 0x38800000u) {
    // A normal half: rebias the exponent (127 to 15), then drop 13 mantissa bits as
    // floatToBfloat16 drops 16; a carry out of the mantissa raises the exponent.
    const uint32_t rebiased = magnitude - (112u << 23);
    return static_cast<uint16_t>(sign | ((rebiased + 0xfffu + ((rebiased >> 13) & 1u)) >> 13));
  }
  const uint32_t exponent = magnitude >> 23;
  if (exponent < 102) return static_cast<uint16_t>(sign);  // below 2^-25: zero
  // A subnormal half: x / 2^-24 = significand * 2^(exponent - 126), rounded to an integer,
  // ties to even; 1024 is the smallest normal's bits, reached by rounding up.
  const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - exponent;  // 14 to 24
  const uint32_t kept = significand >> shift, dropped = significand & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  return static_cast<uint16_t>(sign | (kept + ((dropped > half || (dropped == half && (kept & 1u))) ? 1u : 0u)));
}

}  // namespace nn::math
