// LookupTable's rows, shared by the CPU loops and the CUDA kernels: index i of the input (a
// float holding an integer from 0) picks row index[i] of the weight; the weight's gradient adds
// scale times gradOutput's row i into that row, the rows of one index in the order of i.
#pragma once

#include <stdint.h>

#include "nn/math/HostDevice.h"

namespace nn::math {

/// The weight row that index value v picks (the module checks that v is an integer in range).
NN_HD inline int64_t lookupRow(float v) { return static_cast<int64_t>(v); }

/// Column `column` of the weight's gradient, over the n indices in order: gradWeight[index[i],
/// column] += scale gradOutput[i, column].
NN_HD inline void lookupAccumulateColumn(const float* index, const float* gradOutput, int64_t n, int64_t nOutput,
                                         int64_t column, float scale, float* gradWeight) {
  for (int64_t i = 0; i < n; ++i)
    gradWeight[lookupRow(index[i]) * nOutput + column] += scale * gradOutput[i * nOutput + column];
}

}  // namespace nn::math
