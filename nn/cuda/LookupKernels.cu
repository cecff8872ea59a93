// The CUDA table of nn::LookupKernels: a thread per output element to gather, a thread per
// weight column to accumulate (math::lookupAccumulateColumn: no two threads touch one element,
// and each adds in index order, as the CPU does). Both do nothing once a check of values on the
// device has failed (nn/cuda/ValueChecks.h): the module checked the indices just before.
#include "nn/cuda/Check.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/Launch.h"
#include "nn/cuda/Tables.h"
#include "nn/cuda/ValueChecks.h"
#include "nn/math/Lookup.h"

namespace nn {

namespace {

using cuda::blocksFor;
using cuda::checkFailed;
using cuda::CheckRecord;
using cuda::kThreads;

__global__ void gatherKernel(const float* index, const float* weight, int64_t n, int64_t nOutput, float* output,
                             const CheckRecord* checks) {
  if (checkFailed(checks)) return;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < n * nOutput;
       e += int64_t{gridDim.x} * blockDim.x)
    output[e] = weight[math::lookupRow(index[e / nOutput]) * nOutput + e % nOutput];
}

__global__ void accumulateKernel(const float* index, const float* gradOutput, int64_t n, int64_t nOutput, float scale,
                                 float* gradWeight, const CheckRecord* checks) {
  if (checkFailed(checks)) return;
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < nOutput; k += int64_t{gridDim.x} * blockDim.x)
    math::lookupAccumulateColumn(index, gradOutput, n, nOutput, k, scale, gradWeight);
}

cudaStream_t streamOf(const Device& device) { return CudaBackend::instance().stream(device.index()); }
const CheckRecord* checksOf(const Device& device) { return CudaBackend::instance().checkRecord(device.index()); }

void gather(const Device& device, const float* index, const float* weight, int64_t n, int64_t nOutput, float* output) {
  if (n * nOutput == 0) return;
  DeviceGuard guard(device);
  gatherKernel<<<blocksFor(static_cast<size_t>(n * nOutput)), kThreads, 0, streamOf(device)>>>(
      index, weight, n, nOutput, output, checksOf(device));
  CUDA_CHECK(cudaGetLastError());
}

void accumulate(const Device& device, const float* index, const float* gradOutput, int64_t n, int64_t nOutput,
                float scale, float* gradWeight) {
  if (n * nOutput == 0) return;
  DeviceGuard guard(device);
  accumulateKernel<<<blocksFor(static_cast<size_t>(nOutput)), kThreads, 0, streamOf(device)>>>(
      index, gradOutput, n, nOutput, scale, gradWeight, checksOf(device));
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

LookupKernels cuda::lookupKernels() {
  LookupKernels k{};
  k.gather = &gather;
  k.accumulate = &accumulate;
  return k;
}

}  // namespace nn
