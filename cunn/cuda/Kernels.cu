// The CUDA backend's own kernels: fill and add, element-wise over contiguous floats.
#include "cunn/cuda/Check.h"
#include "cunn/cuda/Kernels.h"

namespace nn {

namespace {

constexpr unsigned kThreads = 256;
// Enough blocks to fill every GPU we build for; a grid-stride loop covers the rest, so the
// grid size never overflows whatever the count.
constexpr size_t kMaxBlocks = 4096;

unsigned blocksFor(size_t count) {
  const size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

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
