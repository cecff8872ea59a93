// Dropout's noise formula, shared by the CPU loop and the CUDA kernel (each draws u its own way).
#pragma once

#include "nn/HostDevice.h"

namespace nn::math {

/// Torch7's v2 dropout: the factor for one element is 1 / (1 - p) with probability 1 - p and 0
/// otherwise, from a uniform u in [0, 1). Scaling at training time keeps the expected output
/// equal to the input, so evaluation passes the input through unchanged.
NN_HD inline float dropoutNoise(float u, float p) { return u < 1.f - p ? 1.f / (1.f - p) : 0.f; }

}  // namespace nn::math
