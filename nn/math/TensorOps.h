// Element formulas of nn::Tensor's in-place arithmetic (add_, mul_, cmul_, cdiv_), shared by the CPU
// loops in nn/Tensor.cpp and the CUDA kernels in cunn/cuda/Kernels.cu.
#pragma once

#include "nn/HostDevice.h"

namespace nn::math {

/// add_: x + alpha * y.
NN_HD inline float addScaled(float x, float alpha, float y) { return x + alpha * y; }

/// mul_ (by a scalar) and cmul_ (by another tensor's element): x * y.
NN_HD inline float multiply(float x, float y) { return x * y; }

/// cdiv_: x / y.
NN_HD inline float divide(float x, float y) { return x / y; }

}  // namespace nn::math
