// The direct route of the CPU Linear's forward and gradInput: tiles of our own (AVX-512, or AVX2 +
// FMA: the same floats) for the training batches (16 to 512 samples), where OpenBLAS packs the
// whole weight matrix for every product, which a batch this small does not repay (Note [Linear
// tiles] in the .cpp).
// The weight gradient stays OpenBLAS's: its large operand is the result, which it does not pack.
// And the narrow route of layers of 16 outputs or fewer, a classifier's: all three products in
// loops of our own (Note [Narrow layers]).
// Both float32 at every matmul precision (nn/runtime/MatmulPrecision.h). Where the GEMMs multiply
// in bfloat16 (medium, Blas.h), they take the direct route's shapes (LinearKernels.cpp); the
// narrow route keeps its own.
#pragma once

#include <cstdint>

#include "nn/tensor/Device.h"
#include "nn/tensor/Tensor.h"

namespace nn::cpu {

/// Whether the direct route serves a Linear of this shape: the kernels' level avx2 or above
/// (Isa.h), a batch of 16 to 512 samples and 32 outputs or more.
bool directLinearFits(int64_t batch, int64_t in, int64_t out);

/// y = x W^T, plus b on every row where bias is not null; each sum bias first, then the terms in
/// order of `in`.
void directLinearUpdateOutput(const Device& device, const float* x, const float* weight, const float* bias, float* y,
                              int64_t batch, int64_t in, int64_t out, Tensor& workspace);
/// gradX = gradY W; each sum's terms in order of `out`.
void directLinearUpdateGradInput(const Device& device, const float* gradY, const float* weight, float* gradX,
                                 int64_t batch, int64_t in, int64_t out, Tensor& workspace);

/// Whether the narrow route serves a Linear of this shape (its three products): the kernels'
/// level avx2 or above and 16 outputs or fewer, a classifier's (Note [Narrow layers] in the .cpp).
bool narrowLinearFits(int64_t batch, int64_t in, int64_t out);

/// y = x W^T, plus b on every row where bias is not null; each output the lanes of its dot
/// product summed, then the bias added.
void narrowLinearUpdateOutput(const Device& device, const float* x, const float* weight, const float* bias, float* y,
                              int64_t batch, int64_t in, int64_t out);
/// gradX = gradY W; each sum's terms in order of `out`, as the direct route's.
void narrowLinearUpdateGradInput(const Device& device, const float* gradY, const float* weight, float* gradX,
                                 int64_t batch, int64_t in, int64_t out);
/// gradW += scale gradY^T x, each sum over the batch in order (the caller adds the bias gradient).
void narrowLinearAccGradWeight(const Device& device, const float* x, const float* gradY, float* gradWeight,
                               int64_t batch, int64_t in, int64_t out, float scale);

}  // namespace nn::cpu
