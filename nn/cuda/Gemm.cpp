// Row-major matrix products through cuBLAS (nn/cuda/Gemm.h).
#include "nn/cuda/Gemm.h"

#include "nn/cuda/Check.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/runtime/Autocast.h"
#include "nn/runtime/MatmulPrecision.h"
#include "nn/tensor/Error.h"

namespace nn::cuda {

namespace {

int toInt(int64_t value, const char* what, const char* who) {
  NN_CHECK(value >= 0 && value < (int64_t{1} << 31),
           who << " on CUDA: " << what << " " << value << " is beyond cuBLAS's int sizes");
  return static_cast<int>(value);
}

// cuBLAS's compute type for float32 operands at `precision`. At highest, the pedantic one: what
// cublasSgemm computes on the handle's CUBLAS_PEDANTIC_MATH (CudaBackend::blas), float32 on any
// GPU generation. An explicit compute type is not overridden by the handle's math mode.
cublasComputeType_t computeType(MatmulPrecision precision) {
  switch (precision) {
    case MatmulPrecision::high:
      return CUBLAS_COMPUTE_32F_FAST_TF32;
    case MatmulPrecision::medium:
      return CUBLAS_COMPUTE_32F_FAST_16BF;
    default:
      return CUBLAS_COMPUTE_32F_PEDANTIC;
  }
}

// The compute type of the calling thread's products: its autocast scope's type where it is in one
// (nn/runtime/Autocast.h: bfloat16 or float16 tensor cores, float32 sums), else the precision's.
cublasComputeType_t computeType() {
  switch (autocastType()) {
    case DType::BFloat16:
      return CUBLAS_COMPUTE_32F_FAST_16BF;
    case DType::Float16:
      return CUBLAS_COMPUTE_32F_FAST_16F;
    default:
      return computeType(float32MatmulPrecision());
  }
}

}  // namespace

// A row-major matrix is its transpose to column-major cuBLAS, so this asks it for
// C^T = op(B)^T op(A)^T.
void gemm(const Device& device, bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const char* who) {
  if (m == 0 || n == 0) return;
  cublasHandle_t handle = CudaBackend::instance().blas(device.index());
  CUBLAS_CHECK(cublasGemmEx(handle, transB ? CUBLAS_OP_T : CUBLAS_OP_N, transA ? CUBLAS_OP_T : CUBLAS_OP_N,
                            toInt(n, "size", who), toInt(m, "size", who), toInt(k, "size", who), &alpha, b, CUDA_R_32F,
                            toInt(ldb, "stride", who), a, CUDA_R_32F, toInt(lda, "stride", who), &beta, c, CUDA_R_32F,
                            toInt(ldc, "stride", who), computeType(), CUBLAS_GEMM_DEFAULT));
}

}  // namespace nn::cuda
