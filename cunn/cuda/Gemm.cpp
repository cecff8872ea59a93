// Row-major matrix products through cuBLAS (cunn/cuda/Gemm.h).
#include "cunn/cuda/Gemm.h"

#include "cunn/cuda/Check.h"
#include "cunn/cuda/CudaBackend.h"
#include "nn/core/Error.h"

namespace nn::cuda {

namespace {

int toInt(int64_t value, const char* what, const char* who) {
  NN_CHECK(value >= 0 && value < (int64_t{1} << 31),
           who << " on CUDA: " << what << " " << value << " is beyond cuBLAS's int sizes");
  return static_cast<int>(value);
}

}  // namespace

// A row-major matrix is its transpose to column-major cuBLAS, so this asks it for
// C^T = op(B)^T op(A)^T.
void gemm(const Device& device, bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const char* who) {
  if (m == 0 || n == 0) return;
  cublasHandle_t handle = CudaBackend::instance().blas(device.index());
  CUBLAS_CHECK(cublasSgemm(handle, transB ? CUBLAS_OP_T : CUBLAS_OP_N, transA ? CUBLAS_OP_T : CUBLAS_OP_N,
                           toInt(n, "size", who), toInt(m, "size", who), toInt(k, "size", who), &alpha, b,
                           toInt(ldb, "stride", who), a, toInt(lda, "stride", who), &beta, c,
                           toInt(ldc, "stride", who)));
}

}  // namespace nn::cuda
