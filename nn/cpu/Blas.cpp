// Row-major single-precision matrix products through OpenBLAS.
#include "nn/cpu/Blas.h"

#include <cblas.h>

#include "nn/core/Error.h"

namespace nn::blas {

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  NN_CHECK(m >= 0 && n >= 0 && k >= 0 && m < (int64_t{1} << 31) && n < (int64_t{1} << 31) && k < (int64_t{1} << 31),
           "nn::blas::gemm: sizes out of range: m=" << m << " n=" << n << " k=" << k);
  if (m == 0 || n == 0) return;
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b,
              static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

void setNumThreads(int threads) {
  NN_CHECK(threads >= 1, "nn::blas::setNumThreads: expected at least 1 thread, got " << threads);
  openblas_set_num_threads(threads);
}

int numThreads() { return openblas_get_num_threads(); }

const char* kernelName() { return openblas_get_corename(); }

}  // namespace nn::blas
