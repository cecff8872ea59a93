// The direct route of the CPU convolution (DirectConvolution.h) and its shallow route
// (ShallowConvolution.h) in each instruction-set form: avx512 (DirectConvolution.cpp,
// ShallowConvolution.cpp) and avx2 (DirectConvolutionAvx2.cpp, ShallowConvolutionAvx2.cpp), which
// sum each value in the same order and so give the same floats; DirectConvolution.cpp and
// ShallowConvolution.cpp call the one of the kernels' level (Isa.h).
#pragma once

#include "nn/backend/ConvolutionKernels.h"
#include "nn/core/Device.h"
#include "nn/core/Tensor.h"

#define NN_CONVOLUTION_FORMS(ns)                                                                                  \
  namespace ns {                                                                                                  \
  void directUpdateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight, \
                          const float* bias, float* output, Tensor& workspace);                                   \
  void directUpdateGradInput(const Device& device, const ConvolutionShape& s, const float* gradOutput,            \
                             const float* weight, float* gradInput, Tensor& workspace);                           \
  void directAccGradParameters(const Device& device, const ConvolutionShape& s, const float* input,               \
                               const float* gradOutput, float* gradWeight, float* gradBias, float scale,          \
                               Tensor& workspace);                                                                \
  void shallowUpdateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight, \
                           const float* bias, float* output, Tensor& workspace);                                  \
  }

namespace nn::cpu {
NN_CONVOLUTION_FORMS(avx512)
NN_CONVOLUTION_FORMS(avx2)
}  // namespace nn::cpu

#undef NN_CONVOLUTION_FORMS
