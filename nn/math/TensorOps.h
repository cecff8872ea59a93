// Element formulas of nn::Tensor's arithmetic (add_, mul_, cmul_, cdiv_), comparisons (eq, lt, ...)
// and reductions along a dimension (sum, mean, max, argmax), shared by the CPU loops in
// nn/cpu/TensorKernels.cpp and the CUDA kernels in nn/cuda/TensorKernels.cu.
#pragma once

#include <cstdint>

#include "nn/math/HostDevice.h"

namespace nn::math {

/// add_: x + alpha * y.
NN_HD inline float addScaled(float x, float alpha, float y) { return x + alpha * y; }

/// mul_ (by a scalar) and cmul_ (by another tensor's element): x * y.
NN_HD inline float multiply(float x, float y) { return x * y; }

/// cdiv_: x / y.
NN_HD inline float divide(float x, float y) { return x / y; }

/// The element-wise comparisons of Tensor::eq, ne, lt, le, gt, ge.
enum class Comparison { kEq, kNe, kLt, kLe, kGt, kGe };

/// 1 where `x op y` holds, else 0. As in IEEE arithmetic (and torch), a NaN compares unequal to
/// everything, itself included, and neither less nor greater.
NN_HD inline float compare(Comparison op, float x, float y) {
  bool holds = false;
  switch (op) {
    case Comparison::kEq:
      holds = x == y;
      break;
    case Comparison::kNe:
      holds = x != y;
      break;
    case Comparison::kLt:
      holds = x < y;
      break;
    case Comparison::kLe:
      holds = x <= y;
      break;
    case Comparison::kGt:
      holds = x > y;
      break;
    case Comparison::kGe:
      holds = x >= y;
      break;
  }
  return holds ? 1.f : 0.f;
}

/// The reductions along one dimension of Tensor::sum, mean, max and argmax.
enum class Reduction { kSum, kMean, kMax, kArgmax, kSumSquares };

/// One result of a reduction along a dimension: over x[k * stride] for k < size. Sums (of the
/// values, or of their squares) are accumulated in double, in order of k, and rounded once (the
/// mean divides the double sum by size). The maximum is the first greatest value, where a NaN counts as greater than
/// every number (torch.max propagates NaN); argmax is its index k, counted from 0, as a float (exact up to 2^24). Needs
/// size > 0 for kMax and kArgmax.
NN_HD inline float reduceAlong(Reduction op, const float* x, int64_t size, int64_t stride) {
  if (op == Reduction::kSum || op == Reduction::kMean) {
    double sum = 0;
    for (int64_t k = 0; k < size; ++k) sum += x[k * stride];
    return static_cast<float>(op == Reduction::kMean ? sum / static_cast<double>(size) : sum);
  }
  if (op == Reduction::kSumSquares) {
    double sum = 0;
    for (int64_t k = 0; k < size; ++k) sum += static_cast<double>(x[k * stride]) * x[k * stride];
    return static_cast<float>(sum);
  }
  int64_t best = 0;
  float bestValue = x[0];
  for (int64_t k = 1; k < size && bestValue == bestValue; ++k) {
    const float v = x[k * stride];
    if (v > bestValue || v != v) {
      best = k;
      bestValue = v;
    }
  }
  return op == Reduction::kMax ? bestValue : static_cast<float>(best);
}

}  // namespace nn::math
