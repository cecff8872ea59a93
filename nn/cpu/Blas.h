// Row-major single-precision matrix products through OpenBLAS, which the library loads itself,
// with the kernels of the CPU it runs on (Note [Choosing OpenBLAS's kernels], Blas.cpp); at the
// float32 matmul precision medium (nn/runtime/MatmulPrecision.h), through the bfloat16 kernel of
// AVX512-BF16 CPUs (Bf16Gemm.h) where it runs.
#pragma once

#include <cstdint>
#include <string>

#include "nn/cpu/CpuFeatures.h"

namespace nn::blas {

/// C = alpha * op(A) * op(B) + beta * C, all row-major; op(X) is X or its transpose.
/// op(A) is m x k, op(B) is k x n, C is m x n; lda, ldb, ldc are row strides. OpenBLAS's sgemm,
/// or cpu::bf16Gemm where bf16Products(), or sgemm on operands rounded to float16 where
/// fp16Products().
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

/// Whether gemm multiplies in bfloat16: at the float32 matmul precision medium, or in the calling
/// thread's bfloat16 autocast scope (nn/runtime/Autocast.h) whatever the precision, where
/// cpu::bf16Gemm runs (AVX512-BF16 at the kernels' level avx512). Where it does not, false, and
/// stderr says once why, naming the CPU's features and level: the products stay float32.
bool bf16Products();
/// Whether gemm rounds its operands to float16 and multiplies them in float32: in the calling
/// thread's float16 autocast scope (no CPU multiplies float16 faster; stderr says so once).
bool fp16Products();
/// bf16Products() or fp16Products(): gemm's products are a narrower type's.
bool reducedProducts();

/// Threads OpenBLAS may use inside one gemm call.
void setNumThreads(int threads);
int numThreads();
/// The kernels OpenBLAS runs, as it names them ("Cooperlake", "Haswell").
const char* kernelName();

/// The kernels, by OpenBLAS's name, that the library asks for on a CPU with `cpu`'s features
/// whose level is `level` (the CPU's, or NN_CPU_ISA's where lower): on x86-64 at avx512
/// SkylakeX, or Cooperlake where the CPU has AVX512-BF16; at avx2 and generic (the build's
/// baseline is AVX2) Zen on AMD and Hygon CPUs, Haswell on the others. nullptr off x86-64, where
/// OpenBLAS's own choice stands.
const char* kernelsFor(const cpu::CpuFeatures& cpu, cpu::Isa level);

/// The level of OpenBLAS's kernels named `name`, in any case: avx512 for SkylakeX, Cooperlake
/// and SapphireRapids, avx2 for Haswell and Zen, generic for every other (older x86 kernels,
/// other architectures').
cpu::Isa kernelsLevel(const std::string& name);

/// The level the library wants OpenBLAS's kernels at: the CPU's (featureLevel), lowered by
/// NN_CPU_ISA where that names a level. Read from the environment as OpenBLAS is loaded; setIsa,
/// later, does not change the BLAS's kernels.
cpu::Isa wantedLevel();

/// Who chose the kernels OpenBLAS runs.
enum class Chooser {
  features,     ///< the library, from the CPU's features (kernelsFor)
  environment,  ///< the user, with OPENBLAS_CORETYPE
  openblas,     ///< OpenBLAS itself: off x86-64, or where the program had loaded it already
};

/// What loading OpenBLAS found.
struct Report {
  /// "OpenBLAS 0.3.21", from its configuration string.
  std::string library;
  /// As kernelName().
  std::string kernels;
  Chooser chosenBy = Chooser::openblas;
  /// The kernels asked for (the library's choice or OPENBLAS_CORETYPE's); empty where none was.
  std::string asked;
  /// Where the kernels are below wantedLevel(), the message said once on stderr; empty otherwise.
  std::string warning;
};

/// Loads OpenBLAS where that has not happened yet (an nn::Error naming the library where it
/// cannot be), and says what it runs.
const Report& report();

/// The warning where OpenBLAS runs `report.kernels` below the level `wanted` of a CPU whose
/// features are `cpu`, saying why from the rest of `report`; empty where they are at that level
/// or above, and off x86-64.
std::string belowLevelWarning(const Report& report, cpu::Isa wanted, const cpu::CpuFeatures& cpu);

}  // namespace nn::blas
