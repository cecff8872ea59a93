// Kernels: the kernel tables of one device type, one per module family, which its Backend
// holds (nn/backend/Backend.h). Each table is a struct of plain functions over raw device
// pointers with one name and one argument order on every device type (Torch7's THNN and
// THCUNN); a module checks shapes and devices, sizes its buffers, and then makes one call.
#pragma once

#include "nn/backend/BatchNormKernels.h"
#include "nn/backend/BroadcastKernels.h"
#include "nn/backend/ConcatKernels.h"
#include "nn/backend/ConvolutionKernels.h"
#include "nn/backend/CriterionKernels.h"
#include "nn/backend/ElementwiseKernels.h"
#include "nn/backend/LinearKernels.h"
#include "nn/backend/LookupKernels.h"
#include "nn/backend/PoolingKernels.h"
#include "nn/backend/SoftMaxKernels.h"
#include "nn/backend/TensorKernels.h"

namespace nn {

struct Kernels {
  TensorKernels tensor;
  ElementwiseKernels elementwise;
  LinearKernels linear;
  ConvolutionKernels convolution;
  PoolingKernels pooling;
  BatchNormKernels batchNorm;
  SoftMaxKernels softMax;
  CriterionKernels criterion;
  ConcatKernels concat;
  BroadcastKernels broadcast;
  LookupKernels lookup;
};

}  // namespace nn
