// The kernel families, listed once: each is one table of nn/backend (a struct of function
// pointers), one member of nn::Kernels, and one builder function per backend folder. The
// Kernels struct (nn/backend/Kernels.h), both backends' declarations of their builders
// (nn/cpu/Tables.h, nn/cuda/Tables.h), both backends' gathering of their tables and
// Backend's check that every entry is filled (nn/backend/KernelEntries.h) are made from this
// list, so that a new family is a table header, a line here and a builder per backend.
#pragma once

/// Calls X(Table, member) for each kernel family, in the order of nn::Kernels' members: Table
/// is the table's struct, member its name in nn::Kernels, and member##Kernels() the function of
/// each backend folder that fills the table.
/// What each family holds:
/// - tensor: nn::Tensor's fill_, arithmetic, comparisons, conversions between element types,
///   and reductions along a dimension.
/// - elementwise: the activations' passes and the optimizers' steps.
/// - linear: nn::Linear's products.
/// - convolution: nn::SpatialConvolution's passes (SpatialFullConvolution runs them the other
///   way round).
/// - pooling: max, average and adaptive average pooling, and nearest-neighbour up-sampling.
/// - batchNorm: nn::BatchNormalization and nn::SpatialBatchNormalization.
/// - normalization: nn::LayerNorm and nn::GroupNorm.
/// - softMax: nn::SoftMax and nn::LogSoftMax.
/// - criterion: the criterions' losses and gradients.
/// - concat: nn::Concat's copies of its parts.
/// - broadcast: parameters broadcast against an input, and sums and maxima over dimensions
///   (CMul, Add, PReLU, Sum, Max, ...).
/// - lookup: nn::LookupTable's rows.
#define NN_KERNEL_FAMILIES(X)            \
  X(TensorKernels, tensor)               \
  X(ElementwiseKernels, elementwise)     \
  X(LinearKernels, linear)               \
  X(ConvolutionKernels, convolution)     \
  X(PoolingKernels, pooling)             \
  X(BatchNormKernels, batchNorm)         \
  X(NormalizationKernels, normalization) \
  X(SoftMaxKernels, softMax)             \
  X(CriterionKernels, criterion)         \
  X(ConcatKernels, concat)               \
  X(BroadcastKernels, broadcast)         \
  X(LookupKernels, lookup)

/// For NN_KERNEL_FAMILIES: declares a backend's builder of one table, `Table member##Kernels();`
/// (tensorKernels(), elementwiseKernels(), ...), in the backend's namespace (Tables.h).
#define NN_DECLARE_KERNEL_TABLE(Table, member) Table member##Kernels();

/// For NN_KERNEL_FAMILIES inside a braced initialiser of nn::Kernels: a call of the builder of
/// one table, found in the namespace of the code that expands it (the backend's).
#define NN_BUILD_KERNEL_TABLE(Table, member) member##Kernels(),
