// The direct route of the CPU convolution: 3x3 layers of stride 1 or 2 and padding 1, and 1x1
// layers of stride 2, onto narrow planes (output rows of 7, 8 or 14 positions: a residual
// network's 7x7 and 14x14 layers and its shortcuts, CIFAR's 8x8), where Winograd's 2x2 blocks fill
// the vector lanes badly and the unfolded GEMMs are small.
// Each output value is the sum of its taps' products in fused multiply-adds, 32 output planes at a
// time in two AVX-512 registers, over tiles of up to 14 positions: each tap's kernels are loaded
// once per tile and each input value is broadcast once for all 32 planes. The gradInput of a layer
// of stride 1 is the same correlation (of gradOutput, each kernel turned by 180 degrees, the
// planes' roles swapped), that of a layer of stride 2 four such correlations with kernels of 1 to
// 4 taps, one for each parity class of the input positions (Note [Stride-2 gradInput] in the .cpp);
// the weight gradient sums, for 32 output planes at a time, each input value's products with the
// gradOutput of the positions it reaches. That is the AVX-512 form; the AVX2 form (16 planes x 6
// positions a tile), compiled from the same source (Note [Direct tiles] in the .cpp), sums each
// value in the same order, and the form of the kernels' level runs (Isa.h).
// float32 at every matmul precision (nn/runtime/MatmulPrecision.h): the bfloat16 products of the
// precision medium are the GEMMs' (Blas.h), which these small shapes do not call.
#pragma once

#include "nn/backend/ConvolutionKernels.h"
#include "nn/tensor/Device.h"
#include "nn/tensor/Tensor.h"

namespace nn::cpu {

/// Whether the direct route serves this layer's forward and weight gradient: a 3x3 kernel of
/// stride 1 or 2 with padding 1, or a 1x1 kernel of stride 2 without (of stride 2: input rows
/// twice the output's), no dilation, no groups, output rows of 7, 8 or 14 positions, output planes a
/// multiple of 32, and the kernels' level avx2 or above (Isa.h; at generic the unfolded route serves
/// it).
bool directFits(const ConvolutionShape& s);
/// And its gradInput: stride 1 and input planes a multiple of 32 too, or stride 2, input planes a
/// multiple of 16 and twice as many input rows as output rows (a 1x1 layer's: its products at the
/// even positions, zeros elsewhere).
bool directGradInputFits(const ConvolutionShape& s);
/// And its weight gradient, which it also serves for 3x3 layers of stride 1 and padding 1 on planes
/// of any width, without groups, from 16 input planes, output planes a multiple of 32, at the level avx512 only
/// (the AVX2 form of that case is not measured against Winograd's yet).
bool directWeightGradientFits(const ConvolutionShape& s);

void directUpdateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                        const float* bias, float* output, Tensor& workspace);
void directUpdateGradInput(const Device& device, const ConvolutionShape& s, const float* gradOutput,
                           const float* weight, float* gradInput, Tensor& workspace);
/// The weight gradient, and where gradBias is not null the bias gradient (ConvolutionBias.h).
void directAccGradParameters(const Device& device, const ConvolutionShape& s, const float* input,
                             const float* gradOutput, float* gradWeight, float* gradBias, float scale,
                             Tensor& workspace);

}  // namespace nn::cpu
