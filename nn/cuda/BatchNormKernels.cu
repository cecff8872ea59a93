// The CUDA table of nn::BatchNormKernels: own kernels over the nn/math/BatchNorm.h formulas
// that the CPU loops call, not cuDNN's batch normalisation. cuDNN 9 marks its batch norm calls
// deprecated (a warning, an error in this build), has no backward for evaluation mode, computes
// gradInput and the parameter gradients in one call where Torch's contract has two, and sums in
// float; these kernels keep Torch7's semantics (eps >= 0, unbiased running variance) and sum in
// double as the CPU does, so only the order of the additions differs.
//
// Reductions take one block per feature: its threads sum a strided share of the feature's
// values in double, then add their partial sums in a tree. Element-wise passes (evaluation mode)
// take a grid-stride loop. Part of CudaBackend (nn/cuda/Tables.h).
#include "nn/cuda/Check.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/Launch.h"
#include "nn/cuda/Reduce.h"
#include "nn/cuda/Tables.h"
#include "nn/math/BatchNorm.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

using cuda::blocksFor;
using cuda::blockSum;
using cuda::kThreads;

// Offset of value i of feature c, i < batch * positions.
__device__ int64_t offsetOf(const BatchNormShape& s, int64_t c, int64_t i) {
  return ((i / s.positions) * s.features + c) * s.positions + i % s.positions;
}

// Over feature c, summed over the block: dotp = sum (x - mean) * g and gsum = sum g, g the
// gradient at y.
__device__ void gradientSums(const float* x, const float* g, const BatchNormShape& s, int64_t c, float mean,
                             const math::BatchNormGradientAtY& gradientAt, double* shared, double& dotp, double& gsum) {
  const int64_t m = s.batch * s.positions;
  double dot = 0, sum = 0;
  for (int64_t i = threadIdx.x; i < m; i += kThreads) {
    const int64_t at = offsetOf(s, c, i);
    const float gy = gradientAt(x[at], g[at]);
    sum += gy;
    dot += math::batchNormDotTerm<double>(x[at], mean, gy);
  }
  dotp = blockSum(dot, shared);
  gsum = blockSum(sum, shared);
}

// One block per feature: the batch statistics, saved and moved into the running ones, then y;
// or one phase of that (BatchNormPhase), the same for the whole block.
__global__ void trainingOutputKernel(const float* x, float* y, BatchNormShape s, BatchNormState st) {
  __shared__ double shared[kThreads];
  const int64_t c = blockIdx.x;
  const int64_t m = s.batch * s.positions;
  float mean, invstd;
  if (st.phase == BatchNormPhase::fromSums) {
    mean = st.saveMean[c];
    invstd = st.saveInvstd[c];
  } else {
    if (st.phase == BatchNormPhase::sumSquares) {
      mean = st.saveMean[c];
    } else {
      double sum = 0;
      for (int64_t i = threadIdx.x; i < m; i += kThreads) sum += x[offsetOf(s, c, i)];
      const double total = blockSum(sum, shared);
      if (st.phase == BatchNormPhase::sumValues) {
        if (threadIdx.x == 0) st.statSums[c] = static_cast<float>(total);
        return;
      }
      mean = math::batchNormAverage(total, m);
    }
    double squares = 0;
    for (int64_t i = threadIdx.x; i < m; i += kThreads)
      squares += math::batchNormSquaredDeviation<double>(x[offsetOf(s, c, i)], mean);
    const double sumSquares = blockSum(squares, shared);
    if (st.phase == BatchNormPhase::sumSquares) {
      if (threadIdx.x == 0) st.statSums[c] = static_cast<float>(sumSquares);
      return;
    }
    invstd = math::batchNormInvstd(math::batchNormAverage(sumSquares, m), st.eps);
    if (threadIdx.x == 0) {
      st.saveMean[c] = mean;
      st.saveInvstd[c] = invstd;
      st.runningMean[c] = math::batchNormRunningMean(st.runningMean[c], mean, st.momentum);
      st.runningVar[c] = math::batchNormRunningVar(st.runningVar[c], sumSquares, m, st.momentum);
    }
  }
  const float w = st.weight ? st.weight[c] : 1.f;
  const float b = st.bias ? st.bias[c] : 0.f;
  for (int64_t i = threadIdx.x; i < m; i += kThreads) {
    const int64_t at = offsetOf(s, c, i);
    const float v = math::batchNormOutput(x[at], mean, invstd, w, b);
    y[at] = math::batchNormRectified(v, st.rectified);
  }
}

// Evaluation mode, element by element, from the running statistics.
__global__ void evaluateOutputKernel(const float* x, float* y, BatchNormShape s, BatchNormState st) {
  const int64_t n = s.batch * s.features * s.positions;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < n; e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t c = (e / s.positions) % s.features;
    const float invstd = math::batchNormInvstd(st.runningVar[c], st.eps);
    const float v = math::batchNormOutput(x[e], st.runningMean[c], invstd, st.weight ? st.weight[c] : 1.f,
                                          st.bias ? st.bias[c] : 0.f);
    y[e] = math::batchNormRectified(v, st.rectified);
  }
}

// One block per feature: the two sums, then gradInput; or one phase of that (BatchNormPhase).
__global__ void trainingGradInputKernel(const float* x, const float* g, float* gi, BatchNormShape s,
                                        BatchNormState st) {
  __shared__ double shared[kThreads];
  const int64_t c = blockIdx.x;
  const int64_t m = s.batch * s.positions;
  const float mean = st.saveMean[c];
  const float invstd = st.saveInvstd[c];
  const math::BatchNormGradientAtY gradientAt = batchNormGradientAtY(st, c, mean, invstd);
  double dotp, gsum;
  int64_t count = m;
  if (st.phase == BatchNormPhase::fromSums) {
    math::batchNormLoadGradSums(st.gradSums, s.features, c, &dotp, &gsum);
    count = st.count;
  } else {
    gradientSums(x, g, s, c, mean, gradientAt, shared, dotp, gsum);
    if (threadIdx.x == 0 && st.gradSums) math::batchNormSaveGradSums(st.gradSums, s.features, c, dotp, gsum);
    if (st.phase == BatchNormPhase::sumGradients) return;
  }
  const float gradMean = math::batchNormAverage(gsum, count);
  const float projection = math::batchNormProjection(dotp, invstd, count);
  const float w = st.weight ? st.weight[c] : 1.f;
  for (int64_t i = threadIdx.x; i < m; i += kThreads) {
    const int64_t at = offsetOf(s, c, i);
    gi[at] = math::batchNormGradInputTraining(gradientAt(x[at], g[at]), x[at], mean, invstd, w, gradMean, projection);
  }
}

__global__ void evaluateGradInputKernel(const float* x, const float* g, float* gi, BatchNormShape s,
                                        BatchNormState st) {
  const int64_t n = s.batch * s.features * s.positions;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < n; e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t c = (e / s.positions) % s.features;
    const float invstd = math::batchNormInvstd(st.runningVar[c], st.eps);
    const float gy = batchNormGradientAtY(st, c, st.runningMean[c], invstd)(x[e], g[e]);
    gi[e] = math::batchNormGradInputEvaluate(gy, invstd, st.weight ? st.weight[c] : 1.f);
  }
}

// One block per feature.
__global__ void accGradParametersKernel(const float* x, const float* g, float* gradWeight, float* gradBias,
                                        BatchNormShape s, BatchNormState st, float scale) {
  __shared__ double shared[kThreads];
  const int64_t c = blockIdx.x;
  float mean, invstd;
  math::batchNormStatistics(st.train, st.saveMean, st.saveInvstd, st.runningMean, st.runningVar, st.eps, c, &mean,
                            &invstd);
  double dotp, gsum;
  if (st.gradSumsValid) {  // the same for the whole block: no thread skips blockSum alone
    math::batchNormLoadGradSums(st.gradSums, s.features, c, &dotp, &gsum);
  } else {
    gradientSums(x, g, s, c, mean, batchNormGradientAtY(st, c, mean, invstd), shared, dotp, gsum);
  }
  if (threadIdx.x == 0) {
    gradWeight[c] += math::batchNormGradWeight(dotp, invstd, scale);
    gradBias[c] += math::batchNormGradBias(gsum, scale);
  }
}

cudaStream_t streamOf(const Device& device) { return CudaBackend::instance().stream(device.index()); }

unsigned featureBlocks(const BatchNormShape& s) {
  NN_CHECK(s.features < (int64_t{1} << 31),
           "nn.BatchNormalization on CUDA: " << s.features << " features are beyond one grid");
  return static_cast<unsigned>(s.features);
}

size_t elements(const BatchNormShape& s) { return static_cast<size_t>(s.batch * s.features * s.positions); }

void updateOutput(const Device& device, const float* x, float* y, const BatchNormShape& s, const BatchNormState& st) {
  if (elements(s) == 0) return;
  DeviceGuard guard(device);
  if (st.train)
    trainingOutputKernel<<<featureBlocks(s), kThreads, 0, streamOf(device)>>>(x, y, s, st);
  else
    evaluateOutputKernel<<<blocksFor(elements(s)), kThreads, 0, streamOf(device)>>>(x, y, s, st);
  CUDA_CHECK(cudaGetLastError());
}

void updateGradInput(const Device& device, const float* x, const float* g, float* gi, const BatchNormShape& s,
                     const BatchNormState& st) {
  if (elements(s) == 0) return;
  DeviceGuard guard(device);
  if (st.train)
    trainingGradInputKernel<<<featureBlocks(s), kThreads, 0, streamOf(device)>>>(x, g, gi, s, st);
  else
    evaluateGradInputKernel<<<blocksFor(elements(s)), kThreads, 0, streamOf(device)>>>(x, g, gi, s, st);
  CUDA_CHECK(cudaGetLastError());
}

void accGradParameters(const Device& device, const float* x, const float* g, float* gradWeight, float* gradBias,
                       const BatchNormShape& s, const BatchNormState& st, float scale) {
  if (s.features == 0) return;
  DeviceGuard guard(device);
  accGradParametersKernel<<<featureBlocks(s), kThreads, 0, streamOf(device)>>>(x, g, gradWeight, gradBias, s, st,
                                                                               scale);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

BatchNormKernels cuda::batchNormKernels() {
  BatchNormKernels k{};
  k.updateOutput = &updateOutput;
  k.updateGradInput = &updateGradInput;
  k.accGradParameters = &accGradParameters;
  return k;
}

}  // namespace nn
