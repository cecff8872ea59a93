// The formula probe compiled by nvcc: the host loop and the kernel (see FormulaProbe.h).
#include "nn/cuda/Check.h"
#include "tests/math/FormulaProbe.h"

namespace nn::test {

namespace {

__global__ void probeKernel(const float* in, int64_t count, float* out) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i < count) probeSample(in + i * kProbeInputs, out + i * kProbeOutputs);
}

}  // namespace

__attribute__((flatten)) void probeFormulasNvccHost(const float* in, int64_t count, float* out) {
  for (int64_t i = 0; i < count; ++i) probeSample(in + i * kProbeInputs, out + i * kProbeOutputs);
}

void probeFormulasDevice(const float* in, int64_t count, float* out, cudaStream_t stream) {
  if (count == 0) return;
  constexpr int threads = 128;
  probeKernel<<<static_cast<unsigned>((count + threads - 1) / threads), threads, 0, stream>>>(in, count, out);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace nn::test
