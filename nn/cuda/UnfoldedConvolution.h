// The unfolded route of a convolution on CUDA (im2col, then cuBLAS), one sample at a time
// through a column matrix in the module's workspace (the layout of nn/math/Im2Col.h). The
// convolution kernels take it for a direction where cuDNN offers no deterministic float32
// algorithm for the shape (Note [Reproducible convolutions] in ConvolutionKernels.cpp), and for
// every direction while tests force it. Each sum is a GEMM's, and folding the columns back adds
// each input cell's taps in one fixed order: no atomics, the same floats from run to run.
#pragma once

#include <cstdint>

#include "nn/backend/ConvolutionKernels.h"
#include "nn/tensor/Device.h"

namespace nn::cuda {

/// Floats of the workspace the route needs: one sample's column matrix.
int64_t unfoldedWorkspaceFloats(const ConvolutionShape& s);

/// output = the convolution of input with weight, without the bias.
void unfoldedOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                    float* output, float* columns);
/// gradInput = the gradient of the input.
void unfoldedGradInput(const Device& device, const ConvolutionShape& s, const float* gradOutput, const float* weight,
                       float* gradInput, float* columns);
/// gradWeight += scale * the gradient of the weight.
void unfoldedGradWeight(const Device& device, const ConvolutionShape& s, const float* input, const float* gradOutput,
                        float* gradWeight, float scale, float* columns);

/// While set, plans made from now on take the unfolded route in every direction (for tests:
/// cuDNN offers deterministic algorithms for the shapes a test can make).
void forceUnfoldedConvolutions(bool force);
bool unfoldedConvolutionsForced();
/// How many passes the unfolded route has run in this process, for tests that require it ran.
int64_t unfoldedConvolutionPasses();

}  // namespace nn::cuda
