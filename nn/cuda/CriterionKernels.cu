// The CUDA table of nn::CriterionKernels: kernels that only index and call the nn/math
// formulas the CPU loops call. A loss is one block: its threads sum a strided share of the
// terms in double, then add their partial sums in a tree (Reduce.h), and one thread writes
// the loss; only the order of the double additions differs from the CPU's. Gradients are
// element-wise (one thread per row for the cross-entropy, which needs the row's log-sum-exp).
// The kernels that index with class targets do nothing once a check of values on the device has
// failed (nn/cuda/ValueChecks.h): the criterion checked the targets just before, and the
// failure is thrown at the next host wait, which comes no later than the loss's read.
// Part of CudaBackend (nn/cuda/Tables.h).
#include "nn/cuda/Check.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/Launch.h"
#include "nn/cuda/Reduce.h"
#include "nn/cuda/Tables.h"
#include "nn/cuda/ValueChecks.h"
#include "nn/math/CrossEntropy.h"
#include "nn/math/Loss.h"
#include "nn/math/MultiMargin.h"
#include "nn/math/PointwiseLoss.h"

namespace nn {

namespace {

using cuda::blocksFor;
using cuda::blockSum;
using cuda::checkFailed;
using cuda::CheckRecord;
using cuda::kThreads;

__global__ void classNllLossKernel(const float* x, const float* t, int64_t batch, int64_t classes, bool sizeAverage,
                                   float* loss, const CheckRecord* checks) {
  if (checkFailed(checks)) return;
  __shared__ double shared[kThreads];
  double total = 0;
  for (int64_t i = threadIdx.x; i < batch; i += kThreads) total -= x[i * classes + static_cast<int64_t>(t[i])];
  total = blockSum(total, shared);
  if (threadIdx.x == 0) *loss = math::averageLoss(total, batch, sizeAverage);
}

__global__ void classNllGradientKernel(const float* t, float* gradIn, int64_t batch, int64_t classes, float g,
                                       const CheckRecord* checks) {
  if (checkFailed(checks)) return;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < batch * classes;
       e += int64_t{gridDim.x} * blockDim.x)
    gradIn[e] = e % classes == static_cast<int64_t>(t[e / classes]) ? g : 0.f;
}

__global__ void crossEntropyLossKernel(const float* x, const float* t, int64_t batch, int64_t classes, bool sizeAverage,
                                       float* loss, const CheckRecord* checks) {
  if (checkFailed(checks)) return;
  __shared__ double shared[kThreads];
  double total = 0;
  for (int64_t i = threadIdx.x; i < batch; i += kThreads) {
    const float* row = x + i * classes;
    total += math::crossEntropyLoss(math::logSumExp(row, classes), row[static_cast<int64_t>(t[i])]);
  }
  total = blockSum(total, shared);
  if (threadIdx.x == 0) *loss = math::averageLoss(total, batch, sizeAverage);
}

__global__ void crossEntropyGradientKernel(const float* x, const float* t, float* gradIn, int64_t batch,
                                           int64_t classes, float norm, const CheckRecord* checks) {
  if (checkFailed(checks)) return;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < batch; i += int64_t{gridDim.x} * blockDim.x) {
    const float* row = x + i * classes;
    float* g = gradIn + i * classes;
    const math::LogSumExp lse = math::logSumExp(row, classes);
    const int64_t label = static_cast<int64_t>(t[i]);
    for (int64_t j = 0; j < classes; ++j) g[j] = math::crossEntropyGradient(row[j], lse, j == label, norm);
  }
}

__global__ void multiMarginLossKernel(const float* x, const float* t, const float* weights, int64_t batch,
                                      int64_t classes, int p, float margin, bool sizeAverage, float* loss,
                                      const CheckRecord* checks) {
  if (checkFailed(checks)) return;
  __shared__ double shared[kThreads];
  double total = 0;
  for (int64_t i = threadIdx.x; i < batch; i += kThreads) {
    const int64_t y = static_cast<int64_t>(t[i]);
    total += math::multiMarginRowLoss(x + i * classes, classes, y, margin, p, weights);
  }
  total = blockSum(total, shared);
  if (threadIdx.x == 0) *loss = math::averageLoss(total, batch, sizeAverage);
}

// A thread per row.
__global__ void multiMarginGradientKernel(const float* x, const float* t, const float* weights, float* gradIn,
                                          int64_t batch, int64_t classes, int p, float margin, float norm,
                                          const CheckRecord* checks) {
  if (checkFailed(checks)) return;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < batch; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t y = static_cast<int64_t>(t[i]);
    math::multiMarginRowGradient(x + i * classes, classes, y, margin, p, weights, norm, gradIn + i * classes);
  }
}

// A point-wise loss L of nn/math/PointwiseLoss.h: the terms summed in double by one block.
template <typename L>
__global__ void pointwiseLossKernel(const float* x, const float* t, const float* weights, int64_t period, int64_t n,
                                    bool sizeAverage, float* loss) {
  __shared__ double shared[kThreads];
  double total = 0;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) total += math::loss::weightedTerm<L>(x, t, weights, period, i);
  total = blockSum(total, shared);
  if (threadIdx.x == 0) *loss = math::averageLoss(total, n, sizeAverage);
}

template <typename L>
__global__ void pointwiseGradientKernel(const float* x, const float* t, const float* weights, int64_t period,
                                        float* gradIn, int64_t n, float norm) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    gradIn[i] = math::loss::weightedGradient<L>(x, t, weights, period, i, norm);
}

cudaStream_t streamOf(const Device& device) { return CudaBackend::instance().stream(device.index()); }
const CheckRecord* checksOf(const Device& device) { return CudaBackend::instance().checkRecord(device.index()); }

// The criterions check for empty inputs: every count here is positive.
void classNllLoss(const Device& device, const float* x, const float* t, int64_t batch, int64_t classes,
                  bool sizeAverage, float* loss) {
  DeviceGuard guard(device);
  classNllLossKernel<<<1, kThreads, 0, streamOf(device)>>>(x, t, batch, classes, sizeAverage, loss, checksOf(device));
  CUDA_CHECK(cudaGetLastError());
}

void classNllGradient(const Device& device, const float* t, float* gradIn, int64_t batch, int64_t classes,
                      bool sizeAverage) {
  DeviceGuard guard(device);
  const float g = math::classNllGradient(math::lossNorm(batch, sizeAverage));
  classNllGradientKernel<<<blocksFor(static_cast<size_t>(batch * classes)), kThreads, 0, streamOf(device)>>>(
      t, gradIn, batch, classes, g, checksOf(device));
  CUDA_CHECK(cudaGetLastError());
}

void crossEntropyLoss(const Device& device, const float* x, const float* t, int64_t batch, int64_t classes,
                      bool sizeAverage, float* loss) {
  DeviceGuard guard(device);
  crossEntropyLossKernel<<<1, kThreads, 0, streamOf(device)>>>(x, t, batch, classes, sizeAverage, loss,
                                                               checksOf(device));
  CUDA_CHECK(cudaGetLastError());
}

void crossEntropyGradient(const Device& device, const float* x, const float* t, float* gradIn, int64_t batch,
                          int64_t classes, bool sizeAverage) {
  DeviceGuard guard(device);
  crossEntropyGradientKernel<<<blocksFor(static_cast<size_t>(batch)), kThreads, 0, streamOf(device)>>>(
      x, t, gradIn, batch, classes, math::lossNorm(batch, sizeAverage), checksOf(device));
  CUDA_CHECK(cudaGetLastError());
}

void multiMarginLoss(const Device& device, const float* x, const float* t, const float* weights, int64_t batch,
                     int64_t classes, int p, float margin, bool sizeAverage, float* loss) {
  DeviceGuard guard(device);
  multiMarginLossKernel<<<1, kThreads, 0, streamOf(device)>>>(x, t, weights, batch, classes, p, margin, sizeAverage,
                                                              loss, checksOf(device));
  CUDA_CHECK(cudaGetLastError());
}

void multiMarginGradient(const Device& device, const float* x, const float* t, const float* weights, float* gradIn,
                         int64_t batch, int64_t classes, int p, float margin, bool sizeAverage) {
  DeviceGuard guard(device);
  multiMarginGradientKernel<<<blocksFor(static_cast<size_t>(batch)), kThreads, 0, streamOf(device)>>>(
      x, t, weights, gradIn, batch, classes, p, margin, math::multiMarginNorm(batch, classes, sizeAverage),
      checksOf(device));
  CUDA_CHECK(cudaGetLastError());
}

template <typename L>
void pointwiseLoss(const Device& device, const float* x, const float* t, const float* weights, int64_t period,
                   int64_t n, bool sizeAverage, float* loss) {
  DeviceGuard guard(device);
  pointwiseLossKernel<L><<<1, kThreads, 0, streamOf(device)>>>(x, t, weights, period, n, sizeAverage, loss);
  CUDA_CHECK(cudaGetLastError());
}

template <typename L>
void pointwiseGradient(const Device& device, const float* x, const float* t, const float* weights, int64_t period,
                       float* gradIn, int64_t n, bool sizeAverage) {
  DeviceGuard guard(device);
  pointwiseGradientKernel<L><<<blocksFor(static_cast<size_t>(n)), kThreads, 0, streamOf(device)>>>(
      x, t, weights, period, gradIn, n, math::lossNorm(n, sizeAverage));
  CUDA_CHECK(cudaGetLastError());
}

// The entry of loss L: its kernels, by field.
template <typename L>
constexpr PointwiseLossKernels pointwiseEntry() {
  PointwiseLossKernels k{};
  k.loss = &pointwiseLoss<L>;
  k.gradient = &pointwiseGradient<L>;
  return k;
}

// The table of the losses of `list`, in its order.
template <typename... L>
std::array<PointwiseLossKernels, sizeof...(L)> pointwise(math::loss::List<L...>) {
  return {pointwiseEntry<L>()...};
}

}  // namespace

CriterionKernels cuda::criterionKernels() {
  CriterionKernels k{};
  k.classNllLoss = &classNllLoss;
  k.classNllGradient = &classNllGradient;
  k.crossEntropyLoss = &crossEntropyLoss;
  k.crossEntropyGradient = &crossEntropyGradient;
  k.multiMarginLoss = &multiMarginLoss;
  k.multiMarginGradient = &multiMarginGradient;
  k.pointwise = pointwise(math::loss::All{});
  return k;
}

}  // namespace nn
