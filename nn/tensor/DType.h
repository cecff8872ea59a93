// nn::DType: the element type of a tensor. float32 is what every module computes in; bfloat16 and
// float16 are storage types for mixed precision (see nn/runtime/Autocast.h) and for files
// (safetensors' BF16 and F16). Their bits and roundings are nn/math/Half.h's.
#pragma once

#include <cstdint>

namespace nn {

/// The element types a Tensor may hold.
enum class DType : uint8_t {
  Float32,   ///< IEEE binary32: every module's arithmetic
  BFloat16,  ///< float32's upper 16 bits: its range, an 8-bit significand
  Float16,   ///< IEEE binary16: a 11-bit significand, values up to 65504
};

/// Bytes of one element: 4 or 2.
constexpr int64_t elementSize(DType dtype) { return dtype == DType::Float32 ? 4 : 2; }

/// "float32", "bfloat16", "float16": the names PyTorch prints.
constexpr const char* dtypeName(DType dtype) {
  return dtype == DType::Float32 ? "float32" : dtype == DType::BFloat16 ? "bfloat16" : "float16";
}

}  // namespace nn
