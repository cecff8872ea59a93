// Element-wise activation formulas, shared by the CPU loops and the CUDA kernels.
#pragma once

#include "nn/HostDevice.h"

namespace nn::math {

/// ReLU (Torch7's Threshold(0, 0)): the gradient passes where the input is > 0.
NN_HD inline float reluForward(float x) { return x > 0.f ? x : 0.f; }
NN_HD inline float reluBackward(float x, float gradOutput) { return x > 0.f ? gradOutput : 0.f; }

}  // namespace nn::math
