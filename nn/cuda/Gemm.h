// Row-major matrix products on a CUDA device through cuBLAS, which is column-major: the one way
// this backend multiplies matrices (Linear, the unfolded convolution), on the device's handle and
// stream (CudaBackend::blas), in the float32 matmul precision in force (nn/runtime/MatmulPrecision.h):
// float32 throughout at highest, TF32 tensor cores at high, bfloat16 ones at medium.
#pragma once

#include <cstdint>

#include "nn/tensor/Device.h"

namespace nn::cuda {

/// Row-major C[m, n] = alpha op(A) op(B) + beta C, where op(X) is X or, where its flag is set,
/// X^T; lda, ldb and ldc are the stored rows' lengths. Queued on the device's stream. An
/// nn::Error naming `who` where a size is beyond cuBLAS's int.
void gemm(const Device& device, bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const char* who);

}  // namespace nn::cuda
