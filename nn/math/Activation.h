// Element-wise activation formulas, shared by the CPU loops and the CUDA kernels.
#pragma once

#include <math.h>  // tanhf, expf: the float functions of both the host and nvcc device code

#include "nn/HostDevice.h"

namespace nn::math {

/// ReLU (Torch7's Threshold(0, 0)): the gradient passes where the input is > 0.
NN_HD inline float reluForward(float x) { return x > 0.f ? x : 0.f; }
NN_HD inline float reluBackward(float x, float gradOutput) { return x > 0.f ? gradOutput : 0.f; }

/// Tanh. As in Torch7, the backward reads the output y = tanh(x): dy/dx = 1 - y^2.
NN_HD inline float tanhForward(float x) { return tanhf(x); }
NN_HD inline float tanhBackward(float y, float gradOutput) { return gradOutput * (1.f - y * y); }

/// Sigmoid 1 / (1 + e^-x). As in Torch7, the backward reads the output y: dy/dx = y (1 - y).
NN_HD inline float sigmoidForward(float x) { return 1.f / (1.f + expf(-x)); }
NN_HD inline float sigmoidBackward(float y, float gradOutput) { return gradOutput * (1.f - y) * y; }

}  // namespace nn::math
