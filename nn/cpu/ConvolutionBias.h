// A convolution's bias gradient on the CPU: each plane's sum of one sample's gradOutput
// (planeSum), rounded to float, times the scale, added to the plane's gradient sample by sample.
// The unfolded route adds a sample's sums as it goes (each part of the batch from zero, the
// parts then in order); the direct route keeps them per sample, taken while the sample's
// gradOutput is in the cache (samplePlaneSums), and adds them after in sample order
// (addPlaneSums), and the Winograd route adds them in a pass of its own, planes on the device's
// threads. The direct and Winograd routes so give the floats of the unfolded route on one
// thread, on any thread count; the unfolded route on several threads sums its parts' gradients
// in another order.
#pragma once

#include <cstdint>

namespace nn::cpu {

/// The sum of n floats: 32 lanes in four independent sums of 8, added pairwise into 8, then a
/// double total.
double planeSum(const float* src, int64_t n);

/// gradBias[o] += scale * the sum of plane o of one sample's gradOutput ([planes][positions]), for
/// the planes [begin, end).
void addSampleBiasGradient(const float* sampleGradOutput, int64_t positions, float scale, float* gradBias,
                           int64_t begin, int64_t end);

/// sums[o] = the sum of plane o of one sample's gradOutput ([planes][positions]), as a float.
void samplePlaneSums(const float* sampleGradOutput, int64_t planes, int64_t positions, float* sums);

/// gradBias[o] += scale * sums[n][o] for the samples n < batch in order, as addSampleBiasGradient
/// would have added them one sample at a time (sums: [batch][planes]).
void addPlaneSums(const float* sums, int64_t batch, int64_t planes, float scale, float* gradBias);

}  // namespace nn::cpu
