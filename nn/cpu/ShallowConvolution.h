// The shallow route of the CPU convolution's forward: a network's first layer, whose few input
// planes (an image's 1 to 4 channels) leave the unfolded route's GEMMs thin (9 to 27 rows, far
// below OpenBLAS's rate) and the direct route's blocks of 32 input broadcasts without work.
// Here the vector lanes run along an output row, 16 positions a vector, two vectors for rows of
// up to 32, each tap's inputs the row of a zero-padded copy of the sample shifted by the tap; a
// tile holds the sums of 4 output planes x 3 rows x 2 vectors (6 rows of one) in registers, each
// input vector loaded once for the 4 planes and each weight broadcast once for the 6 vectors.
// The weight gradient and gradInput stay on the other routes: summed along the rows the same
// way, the weight gradient gained on some first layers and lost on others (rows of 24 positions
// leave half of a row's second vector empty), and a first layer needs no gradInput.
// float32 at every matmul precision (nn/runtime/MatmulPrecision.h): the bfloat16 products of the
// precision medium are the GEMMs' (Blas.h), and a first layer has few multiply-adds to gain.
#pragma once

#include "nn/backend/ConvolutionKernels.h"
#include "nn/tensor/Device.h"
#include "nn/tensor/Tensor.h"

namespace nn::cpu {

/// Whether the shallow route serves this layer's forward: 1 to 4 input planes, square 3x3 or 5x5
/// kernels of stride 1 and padding below the kernel's size, the same on both axes, no dilation, no
/// groups, output rows of at most 32 positions, output planes a multiple of 4, and the kernels' level avx2
/// or above (Isa.h: the AVX-512 form or the AVX2 one, which gives the same floats).
bool shallowFits(const ConvolutionShape& s);

void shallowUpdateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                         const float* bias, float* output, Tensor& workspace);

}  // namespace nn::cpu
