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
#include "nn/backend/NormalizationKernels.h"
#include "nn/backend/PoolingKernels.h"
#include "nn/backend/SoftMaxKernels.h"
#include "nn/backend/TensorKernels.h"

namespace nn {

/// Every kernel table of one device type (Backend::kernels(), kernelsOf(device)).
struct Kernels {
  /// nn::Tensor's fill_, arithmetic, comparisons and reductions along a dimension.
  TensorKernels tensor;
  /// The activations' passes and the optimizers' steps.
  ElementwiseKernels elementwise;
  /// nn::Linear's products.
  LinearKernels linear;
  /// nn::SpatialConvolution's passes (SpatialFullConvolution runs them the other way round).
  ConvolutionKernels convolution;
  /// Max, average and adaptive average pooling, and nearest-neighbour up-sampling.
  PoolingKernels pooling;
  /// nn::BatchNormalization and nn::SpatialBatchNormalization.
  BatchNormKernels batchNorm;
  /// nn::LayerNorm and nn::GroupNorm.
  NormalizationKernels normalization;
  /// nn::SoftMax and nn::LogSoftMax.
  SoftMaxKernels softMax;
  /// The criterions' losses and gradients.
  CriterionKernels criterion;
  /// nn::Concat's copies of its parts.
  ConcatKernels concat;
  /// Parameters broadcast against an input, and sums and maxima over dimensions (CMul, Add, PReLU, Sum, Max, ...).
  BroadcastKernels broadcast;
  /// nn::LookupTable's rows.
  LookupKernels lookup;
};

}  // namespace nn
