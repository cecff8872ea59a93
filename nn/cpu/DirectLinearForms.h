// The direct and narrow routes of the CPU Linear (DirectLinear.h) in each instruction-set form:
// avx512 (DirectLinear.cpp) and avx2 (DirectLinearAvx2.cpp), which give the same floats;
// DirectLinear.cpp calls the one of the kernels' level (Isa.h).
#pragma once

#include <cstdint>

#include "nn/core/Device.h"
#include "nn/core/Tensor.h"

#define NN_LINEAR_FORMS(ns)                                                                                       \
  namespace ns {                                                                                                  \
  void directUpdateOutput(const Device& device, const float* x, const float* weight, const float* bias, float* y, \
                          int64_t batch, int64_t in, int64_t out, Tensor& workspace);                             \
  void directUpdateGradInput(const Device& device, const float* gradY, const float* weight, float* gradX,         \
                             int64_t batch, int64_t in, int64_t out, Tensor& workspace);                          \
  void narrowUpdateOutput(const Device& device, const float* x, const float* weight, const float* bias, float* y, \
                          int64_t batch, int64_t in, int64_t out);                                                \
  void narrowUpdateGradInput(const Device& device, const float* gradY, const float* weight, float* gradX,         \
                             int64_t batch, int64_t in, int64_t out);                                             \
  void narrowAccGradWeight(const Device& device, const float* x, const float* gradY, float* gradWeight,           \
                           int64_t batch, int64_t in, int64_t out, float scale);                                  \
  }

namespace nn::cpu {
NN_LINEAR_FORMS(avx512)
NN_LINEAR_FORMS(avx2)
}  // namespace nn::cpu

#undef NN_LINEAR_FORMS
