// Row-major float32 matrix products on AMX tiles (Intel Sapphire Rapids and later Xeons): the
// operands rounded to bfloat16 as bf16Gemm rounds them (Bf16Gemm.h), their products summed in
// float32 by tdpbf16ps, 16 x 16 sums of 32 k per instruction. bf16Gemm, and so nn::blas::gemm at
// the precision medium, runs here where amxGemmRuns(); elsewhere on vdpbf16ps. One call runs on the
// calling thread, which loads the tiles' configuration as it starts and releases the tiles as it
// ends: the Linear and convolution kernels call it from each compute thread on its own part.
#pragma once

#include <cstdint>
#include <string>

namespace nn::cpu {

/// Whether amxGemm runs here: bf16Gemm runs (Bf16Gemm.h: AVX512-BF16, the kernels' level avx512,
/// a build with the kernels), the CPU has AMX-TILE and AMX-BF16 with the tile state saved by the OS
/// (CpuFeatures.h), and Linux granted this process the tile data (arch_prctl
/// ARCH_REQ_XCOMP_PERM, asked once, the first time the rest holds: never at the levels avx2 and
/// generic), unless allowAmx(false) holds it off.
bool amxGemmRuns();

/// Whether bf16Gemm may run AMX's tiles where they run: true until set; false holds it (and
/// amxGemm) to vdpbf16ps, for the benchmarks that compare the two. Returns the previous setting;
/// for the whole process, between passes, not during one.
bool allowAmx(bool allowed);

/// Empty where amxGemmRuns(); else why not.
std::string amxGemmMissing();

/// bf16Gemm's product (Bf16Gemm.h, the same arguments and contract) on AMX tiles: each element's
/// products summed in float32, in blocks of k, each block's sum then added to C. An nn::Error
/// where amxGemmRuns() is false, or for sizes beyond an int.
void amxGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
             const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

/// amxGemm's product without transposes where op(B)'s rows are anywhere: row kk of B, its n
/// floats, at bRows[kk] (k pointers). The convolution's unfolded columns are rows of its padded
/// input planes at offsets, read from there without unfolding them (ConvolutionKernels.cpp).
void amxGemmRows(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* const* bRows,
                 float beta, float* c, int64_t ldc);

/// amxGemm's product without a transpose of A where op(A)'s rows are anywhere: row i of A, its k
/// floats, at aRows[i] (m pointers). A convolution's weight gradient reads its columns so, the
/// rows of its padded input planes at offsets (ConvolutionKernels.cpp).
void amxGemmRowsOfA(bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* const* aRows,
                    const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

/// The amxGemm, amxGemmRows and amxGemmRowsOfA calls that ran tiles since the program started (a relaxed atomic count),
/// for the tests that the medium precision's products took this route.
int64_t amxGemmCalls();

}  // namespace nn::cpu
