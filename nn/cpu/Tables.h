// The kernel tables of the CPU backend, one per module family (nn/backend/Kernels.h); each is
// defined in the file of its name in this folder, and CpuBackend gathers them.
#pragma once

#include "nn/backend/Kernels.h"

namespace nn::cpu {

TensorKernels tensorKernels();
ElementwiseKernels elementwiseKernels();
LinearKernels linearKernels();
ConvolutionKernels convolutionKernels();
PoolingKernels poolingKernels();
BatchNormKernels batchNormKernels();
NormalizationKernels normalizationKernels();
SoftMaxKernels softMaxKernels();
CriterionKernels criterionKernels();
ConcatKernels concatKernels();
BroadcastKernels broadcastKernels();
LookupKernels lookupKernels();

}  // namespace nn::cpu
