// The entries of each kernel table (nn/backend/*Kernels.h), listed by name, so that
// nn::Backend can refuse a table with an entry left null and name it (checkKernelsFilled in
// nn/backend/Backend.h). An entry is a function pointer, a table within the table
// (PoolingKernels' ResamplingKernels) or an array of such tables (an entry per activation, per
// point-wise loss). Backend.cpp checks at compile time that each list holds every member of its
// table: a member added to a table and not here fails the build there.
#pragma once

// clang-format off
/// The entries of nn::TensorKernels: X(entry) for each.
#define NN_KERNEL_ENTRIES_TensorKernels(X) \
  X(fill) X(convert) X(addScaled) X(scale) X(multiply) X(divide) X(compare) X(reduce)
/// The entries of nn::ElementwiseKernels.
#define NN_KERNEL_ENTRIES_ElementwiseKernels(X) \
  X(activations) X(sgdStep) X(adamStep) X(adagradStep) X(rmspropStep)
/// The entries of nn::ActivationKernels, each of ElementwiseKernels' activations.
#define NN_KERNEL_ENTRIES_ActivationKernels(X) X(forward) X(backward)
/// The entries of nn::LinearKernels.
#define NN_KERNEL_ENTRIES_LinearKernels(X) X(updateOutput) X(updateGradInput) X(accGradParameters)
/// The entries of nn::ConvolutionKernels.
#define NN_KERNEL_ENTRIES_ConvolutionKernels(X) X(updateOutput) X(updateGradInput) X(accGradParameters)
/// The entries of nn::PoolingKernels.
#define NN_KERNEL_ENTRIES_PoolingKernels(X)                                                  \
  X(maxUpdateOutput) X(maxUpdateGradInput) X(averageUpdateOutput) X(averageUpdateGradInput) \
  X(adaptiveAverage) X(upSamplingNearest)
/// The entries of nn::ResamplingKernels, PoolingKernels' adaptiveAverage and upSamplingNearest.
#define NN_KERNEL_ENTRIES_ResamplingKernels(X) X(forward) X(backward)
/// The entries of nn::BatchNormKernels.
#define NN_KERNEL_ENTRIES_BatchNormKernels(X) X(updateOutput) X(updateGradInput) X(accGradParameters)
/// The entries of nn::NormalizationKernels.
#define NN_KERNEL_ENTRIES_NormalizationKernels(X) X(updateOutput) X(updateGradInput) X(accGradParameters)
/// The entries of nn::SoftMaxKernels.
#define NN_KERNEL_ENTRIES_SoftMaxKernels(X) X(updateOutput) X(updateGradInput)
/// The entries of nn::CriterionKernels.
#define NN_KERNEL_ENTRIES_CriterionKernels(X)                                             \
  X(classNllLoss) X(classNllGradient) X(crossEntropyLoss) X(crossEntropyGradient)        \
  X(multiMarginLoss) X(multiMarginGradient) X(pointwise)
/// The entries of nn::PointwiseLossKernels, each of CriterionKernels' point-wise losses.
#define NN_KERNEL_ENTRIES_PointwiseLossKernels(X) X(loss) X(gradient)
/// The entries of nn::ConcatKernels.
#define NN_KERNEL_ENTRIES_ConcatKernels(X) X(copyRuns)
/// The entries of nn::BroadcastKernels.
#define NN_KERNEL_ENTRIES_BroadcastKernels(X) X(apply) X(reduce) X(max) X(maxGradient)
/// The entries of nn::LookupKernels.
#define NN_KERNEL_ENTRIES_LookupKernels(X) X(gather) X(accumulate)

/// The tables held within a family's table, X(Table) for each: NN_KERNEL_FAMILIES and these
/// are every table that has a list above.
#define NN_NESTED_KERNEL_TABLES(X) X(ActivationKernels) X(ResamplingKernels) X(PointwiseLossKernels)
// clang-format on
