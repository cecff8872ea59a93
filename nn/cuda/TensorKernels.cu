// The CUDA table of nn::TensorKernels (fill, the conversions between element types of
// nn/math/Half.h, the tensor arithmetic of nn/math/TensorOps.h over contiguous floats), and the
// backend's own kernels behind the launchers of Kernels.h (the strided copy, the sum of the peer
// communicator).
#include "nn/cuda/Check.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/Kernels.h"
#include "nn/cuda/Launch.h"
#include "nn/cuda/Tables.h"
#include "nn/math/Half.h"
#include "nn/math/TensorOps.h"

namespace nn {

namespace {

using cuda::blocksFor;
using cuda::kThreads;

// Offset of element e (row-major) of a strided view from its first element.
__device__ int64_t offsetOf(int64_t e, const StridedView& view) {
  int64_t offset = 0;
  for (int d = view.dims - 1; d >= 0; --d) {
    offset += (e % view.sizes[d]) * view.strides[d];
    e /= view.sizes[d];
  }
  return offset;
}

__global__ void fillKernel(float* ptr, size_t count, float value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x)
    ptr[i] = value;
}

__global__ void fillStridedKernel(float* ptr, StridedView view, size_t count, float value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x)
    ptr[offsetOf(static_cast<int64_t>(i), view)] = value;
}

// Element i of an array of `type` at `p` as a float (exact for every type).
__device__ float loadAs(DType type, const void* p, int64_t i) {
  if (type == DType::Float32) return static_cast<const float*>(p)[i];
  const uint16_t bits = static_cast<const uint16_t*>(p)[i];
  return type == DType::BFloat16 ? math::bfloat16ToFloat(bits) : math::halfToFloat(bits);
}

// Element i of an array of `type` at `p` = x, rounded to the type (ties to even).
__device__ void storeAs(DType type, void* p, int64_t i, float x) {
  if (type == DType::Float32)
    static_cast<float*>(p)[i] = x;
  else
    static_cast<uint16_t*>(p)[i] = type == DType::BFloat16 ? math::floatToBfloat16(x) : math::floatToHalf(x);
}

// The types are the same for every thread: the branches in loadAs and storeAs do not diverge.
__global__ void convertKernel(void* dst, DType dstType, StridedView dstView, const void* src, DType srcType,
                              StridedView srcView, size_t count) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x) {
    const auto e = static_cast<int64_t>(i);
    storeAs(dstType, dst, offsetOf(e, dstView), loadAs(srcType, src, offsetOf(e, srcView)));
  }
}

__global__ void addKernel(float* dst, const float* src, size_t count) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x)
    dst[i] += src[i];
}

__global__ void addScaledKernel(float* dst, const float* a, const float* src, size_t count, float alpha) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x)
    dst[i] = math::addScaled(a[i], alpha, src[i]);
}

__global__ void scaleKernel(float* ptr, size_t count, float value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x)
    ptr[i] = math::multiply(ptr[i], value);
}

__global__ void multiplyKernel(float* dst, const float* a, const float* b, size_t count) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x)
    dst[i] = math::multiply(a[i], b[i]);
}

__global__ void divideKernel(float* dst, const float* src, size_t count) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x)
    dst[i] = math::divide(dst[i], src[i]);
}

__global__ void compareKernel(float* dst, const float* x, const float* y, float scalar, size_t count,
                              math::Comparison op) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x)
    dst[i] = math::compare(op, x[i], y != nullptr ? y[i] : scalar);
}

// One thread per result: the same order of sums as the CPU's.
__global__ void reduceKernel(float* dst, const float* src, size_t outer, int64_t size, size_t inner,
                             math::Reduction op) {
  for (size_t r = blockIdx.x * size_t{blockDim.x} + threadIdx.x; r < outer * inner;
       r += size_t{gridDim.x} * blockDim.x) {
    const size_t o = r / inner, i = r % inner;
    dst[r] = math::reduceAlong(op, src + o * static_cast<size_t>(size) * inner + i, size, static_cast<int64_t>(inner));
  }
}

__global__ void copyStridedKernel(float* dst, StridedView dstView, const float* src, StridedView srcView,
                                  size_t count) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x) {
    const auto e = static_cast<int64_t>(i);
    dst[offsetOf(e, dstView)] = src[offsetOf(e, srcView)];
  }
}

cudaStream_t streamOf(const Device& device) { return CudaBackend::instance().stream(device.index()); }

void fill(const Device& device, float* ptr, const StridedView& view, int64_t count, float value) {
  if (count == 0) return;
  DeviceGuard guard(device);
  const auto n = static_cast<size_t>(count);
  if (view.isContiguous())
    fillKernel<<<blocksFor(n), kThreads, 0, streamOf(device)>>>(ptr, n, value);
  else
    fillStridedKernel<<<blocksFor(n), kThreads, 0, streamOf(device)>>>(ptr, view, n, value);
  CUDA_CHECK(cudaGetLastError());
}

void addScaled(const Device& device, float* dst, const float* a, const float* src, int64_t count, float alpha) {
  if (count == 0) return;
  DeviceGuard guard(device);
  const auto n = static_cast<size_t>(count);
  addScaledKernel<<<blocksFor(n), kThreads, 0, streamOf(device)>>>(dst, a, src, n, alpha);
  CUDA_CHECK(cudaGetLastError());
}

void scale(const Device& device, float* ptr, int64_t count, float value) {
  if (count == 0) return;
  DeviceGuard guard(device);
  const auto n = static_cast<size_t>(count);
  scaleKernel<<<blocksFor(n), kThreads, 0, streamOf(device)>>>(ptr, n, value);
  CUDA_CHECK(cudaGetLastError());
}

void multiply(const Device& device, float* dst, const float* a, const float* b, int64_t count) {
  if (count == 0) return;
  DeviceGuard guard(device);
  const auto n = static_cast<size_t>(count);
  multiplyKernel<<<blocksFor(n), kThreads, 0, streamOf(device)>>>(dst, a, b, n);
  CUDA_CHECK(cudaGetLastError());
}

void convert(const Device& device, void* dst, DType dstType, const StridedView& dstView, const void* src, DType srcType,
             const StridedView& srcView, int64_t count) {
  if (count == 0) return;
  DeviceGuard guard(device);
  const auto n = static_cast<size_t>(count);
  convertKernel<<<blocksFor(n), kThreads, 0, streamOf(device)>>>(dst, dstType, dstView, src, srcType, srcView, n);
  CUDA_CHECK(cudaGetLastError());
}

void divide(const Device& device, float* dst, const float* src, int64_t count) {
  if (count == 0) return;
  DeviceGuard guard(device);
  const auto n = static_cast<size_t>(count);
  divideKernel<<<blocksFor(n), kThreads, 0, streamOf(device)>>>(dst, src, n);
  CUDA_CHECK(cudaGetLastError());
}

void compare(const Device& device, float* dst, const float* x, const float* y, float scalar, int64_t count,
             math::Comparison op) {
  if (count == 0) return;
  DeviceGuard guard(device);
  const auto n = static_cast<size_t>(count);
  compareKernel<<<blocksFor(n), kThreads, 0, streamOf(device)>>>(dst, x, y, scalar, n, op);
  CUDA_CHECK(cudaGetLastError());
}

void reduce(const Device& device, float* dst, const float* src, int64_t outer, int64_t size, int64_t inner,
            math::Reduction op) {
  const auto results = static_cast<size_t>(outer * inner);
  if (results == 0) return;
  DeviceGuard guard(device);
  reduceKernel<<<blocksFor(results), kThreads, 0, streamOf(device)>>>(dst, src, static_cast<size_t>(outer), size,
                                                                      static_cast<size_t>(inner), op);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

TensorKernels cuda::tensorKernels() {
  TensorKernels k{};
  k.fill = &fill;
  k.convert = &convert;
  k.addScaled = &addScaled;
  k.scale = &scale;
  k.multiply = &multiply;
  k.divide = &divide;
  k.compare = &compare;
  k.reduce = &reduce;
  return k;
}

void launchAdd(float* dst, const float* src, size_t count, cudaStream_t stream) {
  if (count == 0) return;
  addKernel<<<blocksFor(count), kThreads, 0, stream>>>(dst, src, count);
  CUDA_CHECK(cudaGetLastError());
}

void launchCopyStrided(float* dst, const StridedView& dstView, const float* src, const StridedView& srcView,
                       size_t count, cudaStream_t stream) {
  if (count == 0) return;
  copyStridedKernel<<<blocksFor(count), kThreads, 0, stream>>>(dst, dstView, src, srcView, count);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace nn
