// The CUDA backend's own kernels: fill, add, the tensor arithmetic of nn/math/TensorOps.h over
// contiguous floats, and the strided copy.
#include "cunn/cuda/Check.h"
#include "cunn/cuda/Kernels.h"
#include "cunn/cuda/Launch.h"
#include "nn/math/TensorOps.h"

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

__global__ void addScaledKernel(float* dst, const float* src, size_t count, float alpha) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x)
    dst[i] = math::addScaled(dst[i], alpha, src[i]);
}

__global__ void scaleKernel(float* ptr, size_t count, float value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x)
    ptr[i] = math::multiply(ptr[i], value);
}

__global__ void multiplyKernel(float* dst, const float* src, size_t count) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x)
    dst[i] = math::multiply(dst[i], src[i]);
}

// Offset of element e (row-major) of a strided view from its first element.
__device__ int64_t offsetOf(int64_t e, const StridedView& view) {
  int64_t offset = 0;
  for (int d = view.dims - 1; d >= 0; --d) {
    offset += (e % view.sizes[d]) * view.strides[d];
    e /= view.sizes[d];
  }
  return offset;
}

__global__ void copyStridedKernel(float* dst, StridedView dstView, const float* src, StridedView srcView,
                                  size_t count) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x) {
    const auto e = static_cast<int64_t>(i);
    dst[offsetOf(e, dstView)] = src[offsetOf(e, srcView)];
  }
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

void launchAddScaled(float* dst, const float* src, size_t count, float alpha, cudaStream_t stream) {
  if (count == 0) return;
  addScaledKernel<<<blocksFor(count), kThreads, 0, stream>>>(dst, src, count, alpha);
  CUDA_CHECK(cudaGetLastError());
}

void launchScale(float* ptr, size_t count, float value, cudaStream_t stream) {
  if (count == 0) return;
  scaleKernel<<<blocksFor(count), kThreads, 0, stream>>>(ptr, count, value);
  CUDA_CHECK(cudaGetLastError());
}

void launchMultiply(float* dst, const float* src, size_t count, cudaStream_t stream) {
  if (count == 0) return;
  multiplyKernel<<<blocksFor(count), kThreads, 0, stream>>>(dst, src, count);
  CUDA_CHECK(cudaGetLastError());
}

void launchCopyStrided(float* dst, const StridedView& dstView, const float* src, const StridedView& srcView,
                       size_t count, cudaStream_t stream) {
  if (count == 0) return;
  copyStridedKernel<<<blocksFor(count), kThreads, 0, stream>>>(dst, dstView, src, srcView, count);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace nn
