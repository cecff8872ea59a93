// The CUDA table of nn::NormalizationKernels: kernels over the nn/math/Normalization.h formulas
// that the CPU loops call. The forward and updateGradInput take one block per row, whose
// threads sum a strided share of the row's values in double and add their partial sums in a
// tree, then write the row; accGradParameters takes one block per parameter, summing its
// values of every sample alike. Sums in double as the CPU's, so only the order of the
// additions differs. Part of CudaBackend (nn/cuda/Tables.h).
#include "nn/cuda/Check.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/Launch.h"
#include "nn/cuda/Reduce.h"
#include "nn/cuda/Tables.h"
#include "nn/math/Normalization.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

using cuda::blockSum;
using cuda::kThreads;

// Value i of row `row`'s weight or bias, `absent` without affine parameters.
__device__ float parameterOf(const float* p, float absent, const NormalizationShape& s, int64_t row, int64_t i) {
  return p ? p[math::normalizationParameter(row, i, s.groups, s.groupSize, s.positions)] : absent;
}

// One block per row: the row's mean and invstd, saved, then its output.
__global__ void outputKernel(const float* x, float* y, NormalizationShape s, NormalizationState st) {
  __shared__ double shared[kThreads];
  const int64_t row = blockIdx.x, m = s.groupSize;
  const float* xr = x + row * m;
  double sum = 0;
  for (int64_t i = threadIdx.x; i < m; i += kThreads) sum += xr[i];
  const float mean = math::batchNormAverage(blockSum(sum, shared), m);
  double squares = 0;
  for (int64_t i = threadIdx.x; i < m; i += kThreads) squares += math::batchNormSquaredDeviation<double>(xr[i], mean);
  const float invstd = math::batchNormInvstd(math::batchNormAverage(blockSum(squares, shared), m), st.eps);
  if (threadIdx.x == 0) {
    st.saveMean[row] = mean;
    st.saveInvstd[row] = invstd;
  }
  for (int64_t i = threadIdx.x; i < m; i += kThreads)
    y[row * m + i] = math::batchNormOutput(xr[i], mean, invstd, parameterOf(st.weight, 1.f, s, row, i),
                                           parameterOf(st.bias, 0.f, s, row, i));
}

// One block per row: the sums of the gradients at the normalised values, then gradInput.
__global__ void gradInputKernel(const float* x, const float* g, float* gi, NormalizationShape s,
                                NormalizationState st) {
  __shared__ double shared[kThreads];
  const int64_t row = blockIdx.x, m = s.groupSize;
  const float* xr = x + row * m;
  const float* gr = g + row * m;
  const float mean = st.saveMean[row], invstd = st.saveInvstd[row];
  double dot = 0, sum = 0;
  for (int64_t i = threadIdx.x; i < m; i += kThreads) {
    const float gy = math::normalizationScaledGradient(gr[i], parameterOf(st.weight, 1.f, s, row, i));
    sum += gy;
    dot += math::batchNormDotTerm<double>(xr[i], mean, gy);
  }
  const float gradMean = math::batchNormAverage(blockSum(sum, shared), m);
  const float projection = math::batchNormProjection(blockSum(dot, shared), invstd, m);
  for (int64_t i = threadIdx.x; i < m; i += kThreads) {
    const float gy = math::normalizationScaledGradient(gr[i], parameterOf(st.weight, 1.f, s, row, i));
    gi[row * m + i] = math::normalizationGradInput(gy, xr[i], mean, invstd, gradMean, projection);
  }
}

// One block per parameter c: its values of every sample, `positions` of them each.
__global__ void accGradParametersKernel(const float* x, const float* g, float* gradWeight, float* gradBias,
                                        NormalizationShape s, NormalizationState st, float scale) {
  __shared__ double shared[kThreads];
  const int64_t c = blockIdx.x;
  const int64_t sampleSize = s.groups * s.groupSize, count = s.rows / s.groups * s.positions;
  double weightSum = 0, biasSum = 0;
  for (int64_t k = threadIdx.x; k < count; k += kThreads) {
    const int64_t n = k / s.positions, at = n * sampleSize + c * s.positions + k % s.positions;
    const int64_t row = n * s.groups + c * s.positions / s.groupSize;
    weightSum += math::normalizationWeightTerm<double>(x[at], st.saveMean[row], st.saveInvstd[row], g[at]);
    biasSum += g[at];
  }
  const double weightTotal = blockSum(weightSum, shared);
  const double biasTotal = blockSum(biasSum, shared);
  if (threadIdx.x == 0) {
    gradWeight[c] += math::normalizationParameterGradient(weightTotal, scale);
    gradBias[c] += math::normalizationParameterGradient(biasTotal, scale);
  }
}

cudaStream_t streamOf(const Device& device) { return CudaBackend::instance().stream(device.index()); }

// `count` blocks, one grid's worth at most.
unsigned gridOf(int64_t count, const char* what) {
  NN_CHECK(count < (int64_t{1} << 31),
           "nn.LayerNorm and nn.GroupNorm on CUDA: " << count << " " << what << " are beyond one grid");
  return static_cast<unsigned>(count);
}

void updateOutput(const Device& device, const float* x, float* y, const NormalizationShape& s,
                  const NormalizationState& st) {
  if (s.rows == 0 || s.groupSize == 0) return;
  DeviceGuard guard(device);
  outputKernel<<<gridOf(s.rows, "rows"), kThreads, 0, streamOf(device)>>>(x, y, s, st);
  CUDA_CHECK(cudaGetLastError());
}

void updateGradInput(const Device& device, const float* x, const float* g, float* gi, const NormalizationShape& s,
                     const NormalizationState& st) {
  if (s.rows == 0 || s.groupSize == 0) return;
  DeviceGuard guard(device);
  gradInputKernel<<<gridOf(s.rows, "rows"), kThreads, 0, streamOf(device)>>>(x, g, gi, s, st);
  CUDA_CHECK(cudaGetLastError());
}

void accGradParameters(const Device& device, const float* x, const float* g, float* gradWeight, float* gradBias,
                       const NormalizationShape& s, const NormalizationState& st, float scale) {
  if (s.rows == 0 || s.groupSize == 0) return;
  DeviceGuard guard(device);
  accGradParametersKernel<<<gridOf(s.parameters(), "parameters"), kThreads, 0, streamOf(device)>>>(
      x, g, gradWeight, gradBias, s, st, scale);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

NormalizationKernels cuda::normalizationKernels() {
  NormalizationKernels k{};
  k.updateOutput = &updateOutput;
  k.updateGradInput = &updateGradInput;
  k.accGradParameters = &accGradParameters;
  return k;
}

}  // namespace nn
