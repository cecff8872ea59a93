// ConcatKernels: the copies of nn::Concat on one device type, which joins tensors seen as
// [outer, n_i, inner] along n: each part is `outer` runs of n_i * inner contiguous floats. The
// CPU table is in nn/cpu, the CUDA table in nn/cuda; see nn/backend/Backend.h.
#pragma once

#include <cstdint>

#include "nn/tensor/Device.h"

namespace nn {

/// nn::Concat's copies on one device type.
struct ConcatKernels {
  /// Copies `runs` runs of `length` floats: run r from src + r * srcStride to dst + r * dstStride.
  void (*copyRuns)(const Device& device, float* dst, int64_t dstStride, const float* src, int64_t srcStride,
                   int64_t runs, int64_t length);
};

}  // namespace nn
