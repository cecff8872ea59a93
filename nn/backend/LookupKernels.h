// LookupKernels: the work of nn::LookupTable on one device type (nn/math/Lookup.h): n indices
// (floats holding integers from 0, checked by the module), a weight [nIndex, nOutput], an
// output and gradOutput [n, nOutput]. The CPU table is in nn/cpu, the CUDA table in nn/cuda.
#pragma once

#include <cstdint>

#include "nn/tensor/Device.h"

namespace nn {

/// nn::LookupTable's passes on one device type, over the arrays of the file comment.
struct LookupKernels {
  /// output[i] = weight[index[i]], row by row.
  void (*gather)(const Device& device, const float* index, const float* weight, int64_t n, int64_t nOutput,
                 float* output);
  /// gradWeight[index[i]] += scale gradOutput[i] for i = 0, 1, ... in that order
  /// (math::lookupAccumulateColumn for every column).
  void (*accumulate)(const Device& device, const float* index, const float* gradOutput, int64_t n, int64_t nOutput,
                     float scale, float* gradWeight);
};

}  // namespace nn
