// The CUDA table of nn::ConcatKernels: the runs as one 2-D copy (cudaMemcpy2DAsync, a row per
// run) on the device's stream. Part of CudaBackend (nn/cuda/Tables.h).
#include "nn/cuda/Check.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/Tables.h"

namespace nn {

namespace {

void copyRuns(const Device& device, float* dst, int64_t dstStride, const float* src, int64_t srcStride, int64_t runs,
              int64_t length) {
  if (runs == 0 || length == 0) return;
  cudaStream_t stream = CudaBackend::instance().stream(device.index());
  DeviceGuard guard(device);
  CUDA_CHECK(cudaMemcpy2DAsync(
      dst, static_cast<size_t>(dstStride) * sizeof(float), src, static_cast<size_t>(srcStride) * sizeof(float),
      static_cast<size_t>(length) * sizeof(float), static_cast<size_t>(runs), cudaMemcpyDeviceToDevice, stream));
}

}  // namespace

ConcatKernels cuda::concatKernels() {
  ConcatKernels k{};
  k.copyRuns = &copyRuns;
  return k;
}

}  // namespace nn
