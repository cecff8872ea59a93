// Row-major single-precision matrix products (OpenBLAS on the CPU).
#pragma once

#include <cstdint>

namespace nn::blas {

/// C = alpha * op(A) * op(B) + beta * C, all row-major; op(X) is X or its transpose.
/// op(A) is m x k, op(B) is k x n, C is m x n; lda, ldb, ldc are row strides.
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

/// Threads OpenBLAS may use inside one gemm call.
void setNumThreads(int threads);
int numThreads();
/// The name of the kernels OpenBLAS picked for this CPU (e.g. "Haswell"), which
/// OPENBLAS_CORETYPE overrides.
const char* kernelName();

}  // namespace nn::blas
