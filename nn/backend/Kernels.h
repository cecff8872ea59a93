// Kernels: the kernel tables of one device type, one per module family, which its Backend
// holds (nn/backend/Backend.h). Each table is a struct of plain functions over raw device
// pointers with one name and one argument order on every device type (Torch7's THNN and
// THCUNN); a module checks shapes and devices, sizes its buffers, and then makes one call.
// The families are listed once, with what each holds, in nn/backend/KernelFamilies.h.
#pragma once

#include "nn/backend/BatchNormKernels.h"
#include "nn/backend/BroadcastKernels.h"
#include "nn/backend/ConcatKernels.h"
#include "nn/backend/ConvolutionKernels.h"
#include "nn/backend/CriterionKernels.h"
#include "nn/backend/ElementwiseKernels.h"
#include "nn/backend/KernelFamilies.h"
#include "nn/backend/LinearKernels.h"
#include "nn/backend/LookupKernels.h"
#include "nn/backend/NormalizationKernels.h"
#include "nn/backend/PoolingKernels.h"
#include "nn/backend/SoftMaxKernels.h"
#include "nn/backend/TensorKernels.h"

namespace nn {

/// Every kernel table of one device type (Backend::kernels(), kernelsOf(device)): a member per
/// family of NN_KERNEL_FAMILIES, named as there (tensor, elementwise, linear, convolution,
/// pooling, batchNorm, normalization, softMax, criterion, concat, broadcast, lookup).
struct Kernels {
#define NN_KERNEL_FAMILY_MEMBER(Table, member) Table member;
  // `Table member;` for each X(Table, member) of the list: TensorKernels tensor, ...
  NN_KERNEL_FAMILIES(NN_KERNEL_FAMILY_MEMBER)
#undef NN_KERNEL_FAMILY_MEMBER
};

}  // namespace nn
