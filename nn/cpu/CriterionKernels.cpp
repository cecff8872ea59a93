// The CPU table of CriterionKernels: plain loops, the losses summed in double in order.
#include <algorithm>

#include "nn/cpu/Tables.h"
#include "nn/math/CrossEntropy.h"
#include "nn/math/Loss.h"
#include "nn/math/Mse.h"

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

void cpuMseLoss(const Device&, const float* x, const float* t, int64_t n, bool sizeAverage, float* loss) {
  double total = 0;
  for (int64_t i = 0; i < n; ++i) total += math::mseTerm(x[i], t[i]);
  *loss = math::averageLoss(total, n, sizeAverage);
}

void cpuMseGradient(const Device&, const float* x, const float* t, float* gradIn, int64_t n, bool sizeAverage) {
  const float norm = math::lossNorm(n, sizeAverage);
  for (int64_t i = 0; i < n; ++i) gradIn[i] = math::mseGradient(x[i], t[i], norm);
}

}  // namespace

CriterionKernels criterionKernels() {
  return {&cpuClassNllLoss,         &cpuClassNllGradient, &cpuCrossEntropyLoss,
          &cpuCrossEntropyGradient, &cpuMseLoss,          &cpuMseGradient};
}

}  // namespace nn::cpu
