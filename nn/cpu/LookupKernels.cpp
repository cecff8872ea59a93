// The CPU table of LookupKernels: rows copied on the calling thread; the gradient's columns
// (math::lookupAccumulateColumn, as on CUDA) cut into parts, one per compute thread.
#include <algorithm>

#include "nn/cpu/Tables.h"
#include "nn/math/Lookup.h"
#include "nn/runtime/ComputeThreads.h"

namespace nn::cpu {

namespace {

void cpuGather(const Device&, const float* index, const float* weight, int64_t n, int64_t nOutput, float* output) {
  for (int64_t i = 0; i < n; ++i)
    std::copy_n(weight + math::lookupRow(index[i]) * nOutput, nOutput, output + i * nOutput);
}

void cpuAccumulate(const Device& device, const float* index, const float* gradOutput, int64_t n, int64_t nOutput,
                   float scale, float* gradWeight) {
  parallelRanges(device, nOutput, 1, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k)
      math::lookupAccumulateColumn(index, gradOutput, n, nOutput, k, scale, gradWeight);
  });
}

}  // namespace

LookupKernels lookupKernels() {
  LookupKernels k{};
  k.gather = &cpuGather;
  k.accumulate = &cpuAccumulate;
  return k;
}

}  // namespace nn::cpu
