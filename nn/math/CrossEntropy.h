// Cross-entropy of a row of scores x against a class t (LogSoftMax then ClassNLL in one pass):
//   loss = log(sum_j exp(x_j)) - x_t,   d loss / d x_j = softmax(x)_j - [j == t].
// The log-sum-exp is kept as max + logSum with logSum = log(sum_j exp(x_j - max)): no exp
// overflows, and the scores enter only through x_j - max, which loses nothing for large scores.
#pragma once

#include <cmath>
#include <cstdint>

#include "nn/math/HostDevice.h"

namespace nn::math {

/// log(sum_j exp(x_j)) = max + logSum.
struct LogSumExp {
  /// The largest score.
  float max;
  /// log(sum_j exp(x_j - max)).
  float logSum;
};

/// Over n > 0 scores.
NN_HD inline LogSumExp logSumExp(const float* x, int64_t n) {
  float max = x[0];
  for (int64_t j = 1; j < n; ++j) max = x[j] > max ? x[j] : max;
  float sum = 0.f;
  for (int64_t j = 0; j < n; ++j) sum += expf(x[j] - max);
  return {max, logf(sum)};
}

/// The loss of one row, given its target's score.
NN_HD inline float crossEntropyLoss(LogSumExp lse, float targetScore) { return (lse.max - targetScore) + lse.logSum; }

/// d loss / d x_j, times norm (1 / batch when the loss is averaged over the batch).
NN_HD inline float crossEntropyGradient(float x, LogSumExp lse, bool isTarget, float norm) {
  return norm * (expf((x - lse.max) - lse.logSum) - (isTarget ? 1.f : 0.f));
}

}  // namespace nn::math
