// A convolution's bias gradient on the CPU (ConvolutionBias.h).
#include "nn/cpu/ConvolutionBias.h"

#include "nn/cpu/Multiversion.h"

namespace nn::cpu {

// Four independent chains of 8 lanes, which vectorise: one chain kept the loop waiting on each
// addition's latency.
double planeSum(const float* src, int64_t n) {
  return widest([&]() NN_CPU_INLINE {
    float lanes[32] = {};
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
      for (int64_t j = 0; j < 32; ++j) lanes[j] += src[i + j];
    for (int64_t j = 0; j < 8; ++j) lanes[j] = (lanes[j] + lanes[j + 8]) + (lanes[j + 16] + lanes[j + 24]);
    for (; i + 8 <= n; i += 8)
      for (int64_t j = 0; j < 8; ++j) lanes[j] += src[i + j];
    double sum = 0;
    for (int64_t j = 0; j < 8; ++j) sum += lanes[j];
    for (; i < n; ++i) sum += src[i];
    return sum;
  });
}

void addSampleBiasGradient(const float* sampleGradOutput, int64_t positions, float scale, float* gradBias,
                           int64_t begin, int64_t end) {
  for (int64_t o = begin; o < end; ++o)
    gradBias[o] += scale * static_cast<float>(planeSum(sampleGradOutput + o * positions, positions));
}

void samplePlaneSums(const float* sampleGradOutput, int64_t planes, int64_t positions, float* sums) {
  for (int64_t o = 0; o < planes; ++o)
    sums[o] = static_cast<float>(planeSum(sampleGradOutput + o * positions, positions));
}

void addPlaneSums(const float* sums, int64_t batch, int64_t planes, float scale, float* gradBias) {
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < planes; ++o) gradBias[o] += scale * sums[n * planes + o];
}

}  // namespace nn::cpu
