// nn::Linear's own element formula, shared by the CPU loop and the CUDA kernel (the products
// go through OpenBLAS and cuBLAS).
#pragma once

#include "nn/math/HostDevice.h"

namespace nn::math {

/// One row's term of the bias gradient: gradBias[j] + scale * gradOutput[i][j]. Rows are
/// added in order, i = 0, 1, ..., on both devices, so both give the same floats.
NN_HD inline float biasGradientStep(float gradBias, float scale, float gradOutput) {
  return gradBias + scale * gradOutput;
}

}  // namespace nn::math
