// The CUDA table of nn::BroadcastKernels: grid-stride kernels that only index and call the
// nn/math/Broadcast.h formulas the CPU table calls, a thread per element or per sum, each sum
// in the CPU's order. Each entry makes its device current and queues its kernel on the
// device's stream.
#include "nn/cuda/Check.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/Launch.h"
#include "nn/cuda/Tables.h"

namespace nn {

namespace {

using cuda::blocksFor;
using cuda::kThreads;

__global__ void applyKernel(math::BroadcastOp op, const float* x, const float* p, StridedView pView, float* y,
                            int64_t n) {
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < n; e += int64_t{gridDim.x} * blockDim.x)
    y[e] = math::broadcastApply(op, x[e], p[math::stridedOffset(pView, e)]);
}

__global__ void reduceKernel(const float* x, const float* g, StridedView base, int64_t m, StridedView reduced,
                             int64_t k, float* out, float scale, bool accumulate) {
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < m; j += int64_t{gridDim.x} * blockDim.x)
    math::broadcastReduceAt(x, g, base, reduced, k, j, scale, accumulate, out);
}

__global__ void maxKernel(const float* x, StridedView base, int64_t m, StridedView reduced, int64_t k, float* out,
                          float* indices) {
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < m; j += int64_t{gridDim.x} * blockDim.x)
    math::broadcastMaxAt(x, base, reduced, k, j, out, indices);
}

__global__ void maxGradientKernel(const float* g, const float* indices, StridedView base, int64_t m,
                                  StridedView reduced, float* gradIn) {
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < m; j += int64_t{gridDim.x} * blockDim.x)
    math::broadcastMaxGradientAt(g, indices, base, reduced, j, gradIn);
}

cudaStream_t streamOf(const Device& device) { return CudaBackend::instance().stream(device.index()); }

void apply(const Device& device, math::BroadcastOp op, const float* x, const float* p, const StridedView& pView,
           float* y, int64_t n) {
  if (n == 0) return;
  DeviceGuard guard(device);
  applyKernel<<<blocksFor(static_cast<size_t>(n)), kThreads, 0, streamOf(device)>>>(op, x, p, pView, y, n);
  CUDA_CHECK(cudaGetLastError());
}

void reduce(const Device& device, const float* x, const float* g, const StridedView& base, int64_t m,
            const StridedView& reduced, int64_t k, float* out, float scale, bool accumulate) {
  if (m == 0) return;
  DeviceGuard guard(device);
  reduceKernel<<<blocksFor(static_cast<size_t>(m)), kThreads, 0, streamOf(device)>>>(x, g, base, m, reduced, k, out,
                                                                                     scale, accumulate);
  CUDA_CHECK(cudaGetLastError());
}

void max(const Device& device, const float* x, const StridedView& base, int64_t m, const StridedView& reduced,
         int64_t k, float* out, float* indices) {
  if (m == 0) return;
  DeviceGuard guard(device);
  maxKernel<<<blocksFor(static_cast<size_t>(m)), kThreads, 0, streamOf(device)>>>(x, base, m, reduced, k, out,
                                                                                  indices);
  CUDA_CHECK(cudaGetLastError());
}

void maxGradient(const Device& device, const float* g, const float* indices, const StridedView& base, int64_t m,
                 const StridedView& reduced, float* gradIn, int64_t n) {
  if (n == 0) return;
  DeviceGuard guard(device);
  CUDA_CHECK(cudaMemsetAsync(gradIn, 0, static_cast<size_t>(n) * sizeof(float), streamOf(device)));
  maxGradientKernel<<<blocksFor(static_cast<size_t>(m)), kThreads, 0, streamOf(device)>>>(g, indices, base, m,
                                                                                          reduced, gradIn);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

BroadcastKernels cuda::broadcastKernels() {
  BroadcastKernels k{};
  k.apply = &apply;
  k.reduce = &reduce;
  k.max = &max;
  k.maxGradient = &maxGradient;
  return k;
}

}  // namespace nn
