// The kernel tables of the CUDA backend, one per module family (nn/backend/Kernels.h); each is
// defined in the file of its name in this folder, and CudaBackend gathers them.
#pragma once

#include "nn/backend/Kernels.h"

namespace nn::cuda {

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

}  // namespace nn::cuda
