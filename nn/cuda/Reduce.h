// blockSum: the sum of one double per thread over a block of cuda::kThreads threads, for the
// .cu files whose kernels reduce (batch normalisation, the criterions' losses).
#pragma once

#include "nn/cuda/Launch.h"

namespace nn::cuda {

/// Every thread of the block gets the sum of every thread's `value`, added in a tree. `shared`
/// is the block's array of kThreads doubles in shared memory; every thread must call this.
__device__ inline double blockSum(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (unsigned stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
    __syncthreads();
  }
  const double total = shared[0];
  __syncthreads();  // before the next sum overwrites shared
  return total;
}

}  // namespace nn::cuda
