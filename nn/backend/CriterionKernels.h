// CriterionKernels: the work of nn::ClassNLLCriterion, nn::CrossEntropyCriterion and
// nn::MSECriterion on one device type, over contiguous raw arrays: scores x [batch, classes]
// with class targets [batch] (indices from 0 as floats, already checked), or input and target
// of n elements. A loss is written to one float in the device's memory. The CPU table is in
// nn/cpu, the CUDA table in cunn/cuda; see nn/backend/Backend.h.
#pragma once

#include <cstdint>

#include "nn/Device.h"

namespace nn {

struct CriterionKernels {
  /// *loss = -sum_i x[i][t_i], divided by batch where sizeAverage.
  void (*classNllLoss)(const Device& device, const float* x, const float* target, int64_t batch, int64_t classes,
                       bool sizeAverage, float* loss);
  /// gradIn [batch, classes]: -1 (or -1 / batch) at each row's target, 0 elsewhere.
  void (*classNllGradient)(const Device& device, const float* target, float* gradIn, int64_t batch, int64_t classes,
                           bool sizeAverage);
  /// *loss = sum_i log(sum_j exp(x[i][j])) - x[i][t_i], divided by batch where sizeAverage.
  void (*crossEntropyLoss)(const Device& device, const float* x, const float* target, int64_t batch, int64_t classes,
                           bool sizeAverage, float* loss);
  /// gradIn = softmax(x) - onehot(t), per row, divided by batch where sizeAverage.
  void (*crossEntropyGradient)(const Device& device, const float* x, const float* target, float* gradIn, int64_t batch,
                               int64_t classes, bool sizeAverage);
  /// *loss = sum_i (x_i - t_i)^2, divided by n where sizeAverage.
  void (*mseLoss)(const Device& device, const float* x, const float* target, int64_t n, bool sizeAverage, float* loss);
  /// gradIn_i = 2 (x_i - t_i), divided by n where sizeAverage.
  void (*mseGradient)(const Device& device, const float* x, const float* target, float* gradIn, int64_t n,
                      bool sizeAverage);
};

}  // namespace nn
