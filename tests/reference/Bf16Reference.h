// bfloat16 rounding as AVX512-BF16's vcvtne2ps2bf16 does it, for the references of the bfloat16
// products (nn/cpu/Bf16Gemm.h, the float32 matmul precision medium).
#pragma once

#include <cstdint>
#include <cstring>

namespace nn::test {

/// x rounded to bfloat16, as a float: to nearest, ties to even; zeros and denormals to a zero of
/// their sign. Not for NaN.
inline float bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7f800000u) == 0)
    u &= 0x80000000u;
  else
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  std::memcpy(&x, &u, sizeof u);
  return x;
}

}  // namespace nn::test
