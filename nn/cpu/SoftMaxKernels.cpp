// The CPU table of SoftMaxKernels. Each frame of
// [outer, classes, inner] is walked class by class, so the innermost loop runs over contiguous
// memory, with one running max and sum per column.
#include <math.h>

#include "nn/cpu/Tables.h"

namespace nn::cpu {

namespace {

// max[i] = the largest of column i of one frame.
void columnMax(const float* in, const math::SoftMaxShape& s, float* max) {
  for (int64_t i = 0; i < s.inner; ++i) max[i] = -INFINITY;
  for (int64_t c = 0; c < s.classes; ++c)
    for (int64_t i = 0; i < s.inner; ++i) max[i] = fmaxf(max[i], in[c * s.inner + i]);
}

void cpuUpdateOutput(const Device&, bool log, const float* x, float* y, const math::SoftMaxShape& s, float* columns) {
  float* max = columns;
  float* sum = columns + s.inner;
  const int64_t frame = s.classes * s.inner;
  for (int64_t o = 0; o < s.outer; ++o) {
    const float* in = x + o * frame;
    float* out = y + o * frame;
    columnMax(in, s, max);
    for (int64_t i = 0; i < s.inner; ++i) sum[i] = 0.f;
    if (log) {
      for (int64_t c = 0; c < s.classes; ++c)
        for (int64_t i = 0; i < s.inner; ++i) sum[i] += math::softMaxExp(in[c * s.inner + i], max[i]);
      // One log per column, not per element.
      for (int64_t i = 0; i < s.inner; ++i) sum[i] = logf(sum[i]);
      for (int64_t c = 0; c < s.classes; ++c)
        for (int64_t i = 0; i < s.inner; ++i)
          out[c * s.inner + i] = math::logSoftMaxOutput(in[c * s.inner + i], max[i], sum[i]);
    } else {
      for (int64_t c = 0; c < s.classes; ++c)
        for (int64_t i = 0; i < s.inner; ++i) {
          const float e = math::softMaxExp(in[c * s.inner + i], max[i]);
          out[c * s.inner + i] = e;
          sum[i] += e;
        }
      for (int64_t c = 0; c < s.classes; ++c)
        for (int64_t i = 0; i < s.inner; ++i) out[c * s.inner + i] = math::softMaxOutput(out[c * s.inner + i], sum[i]);
    }
  }
}

void cpuUpdateGradInput(const Device&, bool log, const float* y, const float* gradOut, float* gradIn,
                        const math::SoftMaxShape& s, float* columns) {
  // Per column: sum_k g_k y_k for softmax, sum_k g_k for log-softmax.
  float* acc = columns;
  const int64_t frame = s.classes * s.inner;
  for (int64_t o = 0; o < s.outer; ++o) {
    const float* yo = y + o * frame;
    const float* gout = gradOut + o * frame;
    float* gin = gradIn + o * frame;
    for (int64_t i = 0; i < s.inner; ++i) acc[i] = 0.f;
    if (log) {
      for (int64_t c = 0; c < s.classes; ++c)
        for (int64_t i = 0; i < s.inner; ++i) acc[i] += gout[c * s.inner + i];
      for (int64_t c = 0; c < s.classes; ++c)
        for (int64_t i = 0; i < s.inner; ++i)
          gin[c * s.inner + i] = math::logSoftMaxBackward(yo[c * s.inner + i], gout[c * s.inner + i], acc[i]);
    } else {
      for (int64_t c = 0; c < s.classes; ++c)
        for (int64_t i = 0; i < s.inner; ++i) acc[i] += gout[c * s.inner + i] * yo[c * s.inner + i];
      for (int64_t c = 0; c < s.classes; ++c)
        for (int64_t i = 0; i < s.inner; ++i)
          gin[c * s.inner + i] = math::softMaxBackward(yo[c * s.inner + i], gout[c * s.inner + i], acc[i]);
    }
  }
}

}  // namespace

SoftMaxKernels softMaxKernels() {
  SoftMaxKernels k{};
  k.updateOutput = &cpuUpdateOutput;
  k.updateGradInput = &cpuUpdateGradInput;
  return k;
}

}  // namespace nn::cpu
