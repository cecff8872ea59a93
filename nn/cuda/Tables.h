// The kernel tables of the CUDA backend, one per module family (nn/backend/KernelFamilies.h);
// each is defined in the file of its name in this folder, and CudaBackend gathers them.
#pragma once

#include "nn/backend/Kernels.h"

namespace nn::cuda {

// TensorKernels tensorKernels(); ElementwiseKernels elementwiseKernels(); ... one per family.
NN_KERNEL_FAMILIES(NN_DECLARE_KERNEL_TABLE)

}  // namespace nn::cuda
