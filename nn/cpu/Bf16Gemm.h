// Row-major float32 matrix products at bfloat16 speed (PyTorch's float32 matmul precision
// "medium" on the CPU): the operands rounded to bfloat16, to nearest with ties to even as
// vcvtne2ps2bf16 rounds, and their products summed in float32 by vdpbf16ps, which does twice the
// multiply-adds of an FMA per instruction. AVX512-BF16 only: Cooper Lake, Sapphire Rapids and
// later Xeons, Zen 4 and later; where the CPU also has AMX (Sapphire Rapids and later Xeons), its
// tiles do the products instead (AmxGemm.h), with the same rounding. nn::blas::gemm sends its products here at the precision medium
// (nn/runtime/MatmulPrecision.h, Blas.h); the bench (kernels) calls it beside OpenBLAS's sgemm.
// One call runs on the calling thread: the Linear and convolution kernels cut their work into
// parts, one per compute thread, each calling gemm on its own part, as they do with OpenBLAS.
#pragma once

#include <cstdint>
#include <string>

namespace nn::cpu {

/// Whether bf16Gemm runs here: the CPU has AVX512-BF16 (CpuFeatures.h), the build compiled the
/// kernel (GCC on x86-64; not Clang's fuzz build, nor off x86-64) and the kernels' level (Isa.h,
/// lowered by NN_CPU_ISA or setIsa) is avx512.
bool bf16GemmRuns();

/// Empty where bf16GemmRuns(); else why not, naming the CPU's features and the kernels' level.
std::string bf16GemmMissing();

/// C = alpha * op(A) * op(B) + beta * C with nn::blas::gemm's arguments and conventions (row-major,
/// op(A) m x k, op(B) k x n, lda, ldb and ldc row strides; beta 0 reads nothing of C), each
/// element of A and B rounded to bfloat16 and the products of each element of C summed in
/// float32, in blocks of k, each block's sum then added to C. AMX's tiles where amxGemmRuns()
/// (AmxGemm.h), else vdpbf16ps. An nn::Error where bf16GemmRuns() is false, or for sizes beyond
/// an int as gemm's.
void bf16Gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
              const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

/// bf16Gemm on vdpbf16ps alone, AMX or not: for the tests and benchmarks that compare the two.
void avx512Bf16Gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

/// The instructions bf16Gemm runs here: "AMX", "AVX512-BF16", or "" where it does not run.
const char* bf16GemmKernel();

}  // namespace nn::cpu
