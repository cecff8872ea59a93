// The CPU table of CriterionKernels: plain loops, the losses summed in double in order.
#include <algorithm>

#include "nn/cpu/Tables.h"
#include "nn/math/CrossEntropy.h"
#include "nn/math/Loss.h"
#include "nn/math/MultiMargin.h"
#include "nn/math/PointwiseLoss.h"

namespace nn::cpu {

namespace {

void cpuClassNllLoss(const Device&, const float* x, const float* t, int64_t batch, int64_t classes, bool sizeAverage,
                     float* loss) {
  double total = 0;
  for (int64_t i = 0; i < batch; ++i) total -= x[i * classes + static_cast<int64_t>(t[i])];
  *loss = math::averageLoss(total, batch, sizeAverage);
}

void cpuClassNllGradient(const Device&, const float* t, float* gradIn, int64_t batch, int64_t classes,
                         bool sizeAverage) {
  std::fill(gradIn, gradIn + batch * classes, 0.f);
  const float g = math::classNllGradient(math::lossNorm(batch, sizeAverage));
  for (int64_t i = 0; i < batch; ++i) gradIn[i * classes + static_cast<int64_t>(t[i])] = g;
}

void cpuCrossEntropyLoss(const Device&, const float* x, const float* t, int64_t batch, int64_t classes,
                         bool sizeAverage, float* loss) {
  double total = 0;
  for (int64_t i = 0; i < batch; ++i) {
    const float* row = x + i * classes;
    total += math::crossEntropyLoss(math::logSumExp(row, classes), row[static_cast<int64_t>(t[i])]);
  }
  *loss = math::averageLoss(total, batch, sizeAverage);
}

void cpuCrossEntropyGradient(const Device&, const float* x, const float* t, float* gradIn, int64_t batch,
                             int64_t classes, bool sizeAverage) {
  const float norm = math::lossNorm(batch, sizeAverage);
  for (int64_t i = 0; i < batch; ++i) {
    const float* row = x + i * classes;
    float* g = gradIn + i * classes;
    const math::LogSumExp lse = math::logSumExp(row, classes);
    const int64_t label = static_cast<int64_t>(t[i]);
    for (int64_t j = 0; j < classes; ++j) g[j] = math::crossEntropyGradient(row[j], lse, j == label, norm);
  }
}

void cpuMultiMarginLoss(const Device&, const float* x, const float* t, const float* weights, int64_t batch,
                       int64_t classes, int p, float margin, bool sizeAverage, float* loss) {
  double total = 0;
  for (int64_t i = 0; i < batch; ++i) {
    const int64_t y = static_cast<int64_t>(t[i]);
    total += math::multiMarginRowLoss(x + i * classes, classes, y, margin, p, weights);
  }
  *loss = math::averageLoss(total, batch, sizeAverage);
}

void cpuMultiMarginGradient(const Device&, const float* x, const float* t, const float* weights, float* gradIn,
                            int64_t batch, int64_t classes, int p, float margin, bool sizeAverage) {
  const float norm = math::multiMarginNorm(batch, classes, sizeAverage);
  for (int64_t i = 0; i < batch; ++i) {
    const int64_t y = static_cast<int64_t>(t[i]);
    math::multiMarginRowGradient(x + i * classes, classes, y, margin, p, weights, norm,
                                 gradIn + i * classes);
  }
}

// A point-wise loss L of nn/math/PointwiseLoss.h: the terms summed in double in order.
template <typename L>
void pointwiseLoss(const Device&, const float* x, const float* t, const float* weights, int64_t period, int64_t n,
                   bool sizeAverage, float* loss) {
  double total = 0;
  for (int64_t i = 0; i < n; ++i) total += math::loss::weightedTerm<L>(x, t, weights, period, i);
  *loss = math::averageLoss(total, n, sizeAverage);
}

template <typename L>
void pointwiseGradient(const Device&, const float* x, const float* t, const float* weights, int64_t period,
                       float* gradIn, int64_t n, bool sizeAverage) {
  const float norm = math::lossNorm(n, sizeAverage);
  for (int64_t i = 0; i < n; ++i) gradIn[i] = math::loss::weightedGradient<L>(x, t, weights, period, i, norm);
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

CriterionKernels criterionKernels() {
  CriterionKernels k{};
  k.classNllLoss = &cpuClassNllLoss;
  k.classNllGradient = &cpuClassNllGradient;
  k.crossEntropyLoss = &cpuCrossEntropyLoss;
  k.crossEntropyGradient = &cpuCrossEntropyGradient;
  k.multiMarginLoss = &cpuMultiMarginLoss;
  k.multiMarginGradient = &cpuMultiMarginGradient;
  k.pointwise = pointwise(math::loss::All{});
  return k;
}

}  // namespace nn::cpu
