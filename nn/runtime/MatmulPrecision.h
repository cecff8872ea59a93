// The precision of float32 matrix products, one setting for the whole process, as PyTorch's
// torch.set_float32_matmul_precision: at highest (the default) every product is float32's; at
// high and medium a backend may round the operands to a narrower type on hardware that
// multiplies it faster, and sum the products in float32. What each backend does:
//  - CPU: at medium, the GEMMs (nn/cpu/Blas.h: the Linear layers, the unfolded and Winograd
//    convolutions) round their operands to bfloat16 where the CPU has AVX512-BF16 and the
//    kernels' level is avx512 (nn/cpu/Bf16Gemm.h); on other CPUs they stay float32 and stderr says
//    so once. high is highest there, as PyTorch's CPU keeps float32 at high. Our own direct and
//    narrow kernels stay float32 at every setting.
//  - CUDA: cuBLAS's compute type CUBLAS_COMPUTE_32F_FAST_TF32 at high and
//    CUBLAS_COMPUTE_32F_FAST_16BF at medium (TF32 or bfloat16 tensor cores), and cuDNN's
//    convolutions may take tensor-core algorithms (TF32) at either.
// A product's rounding error then grows from float32's 2^-24 per term to bfloat16's 2^-9 (TF32's
// 2^-11) per operand: training usually reaches the same accuracy, a gradient check does not pass.
#pragma once

#include <string>

namespace nn {

/// PyTorch's names and meanings (see the top of this file).
enum class MatmulPrecision {
  highest,  ///< float32 products everywhere
  high,     ///< TF32 tensor cores on CUDA; float32 on the CPU
  medium,   ///< bfloat16 products: AVX512-BF16 on the CPU, bfloat16 tensor cores on CUDA
};

/// Sets the precision for the whole process (a relaxed atomic), read by each product as it starts:
/// set it between passes, not during one.
void setFloat32MatmulPrecision(MatmulPrecision precision);
/// The precision in force; highest until set.
MatmulPrecision float32MatmulPrecision();

/// "highest", "high", "medium".
const char* matmulPrecisionName(MatmulPrecision precision);
/// The precision named "highest", "high" or "medium"; another name is an nn::Error listing them.
MatmulPrecision matmulPrecisionNamed(const std::string& name);

/// What the precision in force does on the CPU devices, in words: "highest: float32 products",
/// "medium: bfloat16 products (AVX512-BF16)", or at medium on a CPU that cannot, "medium: float32
/// products (...why...)". Defined by the CPU backend (nn/cpu), as cpuInfo.
std::string cpuMatmulPrecisionInfo();

}  // namespace nn
