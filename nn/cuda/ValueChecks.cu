// The kernel of Backend::checkValues on CUDA devices (nn/cuda/ValueChecks.h): a thread per
// value calls the nn/math/ValueCheck.h predicate the host's check calls.
#include "nn/cuda/Check.h"
#include "nn/cuda/Launch.h"
#include "nn/cuda/ValueChecks.h"

namespace nn::cuda {

namespace {

__global__ void checkValuesKernel(const float* values, size_t n, math::ValueKind kind, int64_t limit,
                                  unsigned int launch, CheckRecord* record) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const float v = values[i];
    if (math::passesValueCheck(kind, limit, v)) continue;
    // The first launch to fail claims the record; its threads keep the lowest position.
    const unsigned int earlier = atomicCAS(&record->launch, 0u, launch);
    if (earlier != 0u && earlier != launch) return;
    atomicMin(&record->first, packFailure(i, __float_as_uint(v)));
  }
}

}  // namespace

void launchCheckValues(const float* values, size_t n, const ValueCheck& check, unsigned int launch, CheckRecord* record,
                       cudaStream_t stream) {
  checkValuesKernel<<<blocksFor(n), kThreads, 0, stream>>>(values, n, check.kind, check.limit, launch, record);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace nn::cuda
