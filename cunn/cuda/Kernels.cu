// The CUDA backend's own kernels: fill and add, element-wise over contiguous floats.
#include "cunn/cuda/Check.h"
#include "cunn/cuda/Kernels.h"
#include "cunn/cuda/Launch.h"

namespace nn {

namespace {

using cuda::blocksFor;
using cuda::kThreads;

__global__ void fillKernel(float* ptr, size_t count, float value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x)
    ptr[i] = value;
}

__global__ void addKernel(float* dst, const float* src, size_t count) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x)
    dst[i] += src[i];
}

}  // namespace

void launchFill(float* ptr, size_t count, float value, cudaStream_t stream) {
  if (count == 0) return;
  fillKernel<<<blocksFor(count), kThreads, 0, stream>>>(ptr, count, value);
  CUDA_CHECK(cudaGetLastError());
}

void launchAdd(float* dst, const float* src, size_t count, cudaStream_t stream) {
  if (count == 0) return;
  addKernel<<<blocksFor(count), kThreads, 0, stream>>>(dst, src, count);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace nn
