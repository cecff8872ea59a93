// The CUDA table of nn::LinearKernels: the three products through cuBLAS, the bias through
// two small kernels that add in the CPU table's order. Each entry makes its device current;
// everything is queued on the device's stream (CudaBackend's blas handle uses it).
// Part of CudaBackend (nn/cuda/Tables.h).
#include "nn/cuda/Check.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/Gemm.h"
#include "nn/cuda/Launch.h"
#include "nn/cuda/Tables.h"
#include "nn/math/Linear.h"

namespace nn {

namespace {

using cuda::blocksFor;
using cuda::kThreads;

// y[i][j] = bias[j] for every row i.
__global__ void fillRowsKernel(float* y, const float* bias, int64_t batch, int64_t out) {
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < batch * out;
       e += int64_t{gridDim.x} * blockDim.x)
    y[e] = bias[e % out];
}

// gradBias[j] += scale * gradY[i][j] for i = 0, 1, ...: one thread a column, adding rows in
// order as the CPU loop does, so both give the same floats.
__global__ void addColumnsKernel(const float* gradY, float* gradBias, int64_t batch, int64_t out, float scale) {
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < out; j += int64_t{gridDim.x} * blockDim.x) {
    float sum = gradBias[j];
    for (int64_t i = 0; i < batch; ++i) sum = math::biasGradientStep(sum, scale, gradY[i * out + j]);
    gradBias[j] = sum;
  }
}

// Row-major products (nn/cuda/Gemm.h), named as this module's.
void gemm(const Device& device, bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cuda::gemm(device, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, "nn.Linear");
}

cudaStream_t streamOf(const Device& device) { return CudaBackend::instance().stream(device.index()); }

void updateOutput(const Device& device, const float* x, const float* weight, const float* bias, float* y, int64_t batch,
                  int64_t in, int64_t out, Tensor&) {
  DeviceGuard guard(device);
  float beta = 0.f;
  if (bias && batch * out > 0) {
    fillRowsKernel<<<blocksFor(static_cast<size_t>(batch * out)), kThreads, 0, streamOf(device)>>>(y, bias, batch, out);
    CUDA_CHECK(cudaGetLastError());
    beta = 1.f;
  }
  gemm(device, false, true, batch, out, in, 1.f, x, in, weight, in, beta, y, out);
}

void updateGradInput(const Device& device, const float* gradY, const float* weight, float* gradX, int64_t batch,
                     int64_t in, int64_t out, Tensor&) {
  DeviceGuard guard(device);
  gemm(device, false, false, batch, in, out, 1.f, gradY, out, weight, in, 0.f, gradX, in);
}

void accGradParameters(const Device& device, const float* x, const float* gradY, float* gradWeight, float* gradBias,
                       int64_t batch, int64_t in, int64_t out, float scale) {
  DeviceGuard guard(device);
  gemm(device, true, false, out, in, batch, scale, gradY, out, x, in, 1.f, gradWeight, in);
  if (gradBias && out > 0) {
    addColumnsKernel<<<blocksFor(static_cast<size_t>(out)), kThreads, 0, streamOf(device)>>>(gradY, gradBias, batch,
                                                                                             out, scale);
    CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace

LinearKernels cuda::linearKernels() {
  LinearKernels k{};
  k.updateOutput = &updateOutput;
  k.updateGradInput = &updateGradInput;
  k.accGradParameters = &accGradParameters;
  return k;
}

}  // namespace nn
