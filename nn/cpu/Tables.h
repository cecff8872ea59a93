// The kernel tables of the CPU backend, one per module family (nn/backend/KernelFamilies.h);
// each is defined in the file of its name in this folder, and CpuBackend gathers them.
#pragma once

#include "nn/backend/Kernels.h"

namespace nn::cpu {

// TensorKernels tensorKernels(); ElementwiseKernels elementwiseKernels(); ... one per family.
NN_KERNEL_FAMILIES(NN_DECLARE_KERNEL_TABLE)

}  // namespace nn::cpu
