// The Winograd route of the CPU convolution (nn/math/Winograd.h): updateOutput and
// updateGradInput of 3x3 layers of stride 1 as 16 GEMMs over transformed 4x4 blocks, 2.25 times
// fewer multiply-adds than the unfolded GEMM. The gradInput of such a layer is itself a 3x3
// cross-correlation of stride 1 (of gradOutput, with each kernel turned by 180 degrees and the
// planes' roles swapped, padded by 2 - pad), so both passes share one routine;
// accGradParameters transforms the input's blocks as the forward does, and gradOutput's 2x2
// blocks, and sums their products over the batch in GEMMs as long as a chunk's blocks. The GEMMs
// are nn::blas::gemm's; the transforms are float32. Where the GEMMs multiply in bfloat16 on AMX
// (autocast bfloat16, the precision medium), the CPU's convolution sends these layers to the
// unfolded route instead, whose products all run at AMX's rate (Note [bfloat16 products take the
// unfolded route], ConvolutionKernels.cpp).
#pragma once

#include "nn/backend/ConvolutionKernels.h"
#include "nn/tensor/Device.h"
#include "nn/tensor/Tensor.h"

namespace nn::cpu {

/// Whether the Winograd route serves this layer: a 3x3 kernel, stride 1, no dilation, no groups, the same
/// padding of at most 2 on both axes, and planes enough on both sides that its products run at
/// a rate near the unfolded GEMM's (chosen from tools/bench-kernels.sh).
bool winogradFits(const ConvolutionShape& s);

void winogradUpdateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                          const float* bias, float* output, Tensor& workspace);
void winogradUpdateGradInput(const Device& device, const ConvolutionShape& s, const float* gradOutput,
                             const float* weight, float* gradInput, Tensor& workspace);
/// The weight gradient alone (the caller adds the bias gradient, a sum of gradOutput).
void winogradAccGradParameters(const Device& device, const ConvolutionShape& s, const float* input,
                               const float* gradOutput, float* gradWeight, float scale, Tensor& workspace);

}  // namespace nn::cpu
