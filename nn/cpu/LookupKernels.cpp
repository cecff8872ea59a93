// The CPU table of LookupKernels: rows copied, and gradients added row by row in index order
// (per element the order of math::lookupAccumulateColumn), on the calling thread.
#include <algorithm>

#include "nn/cpu/Tables.h"
#include "nn/math/Lookup.h"

namespace nn::cpu {

namespace {

void cpuGather(const Device&, const float* index, const float* weight, int64_t n, int64_t nOutput, float* output) {
  for (int64_t i = 0; i < n; ++i)
    std::copy_n(weight + math::lookupRow(index[i]) * nOutput, nOutput, output + i * nOutput);
}

void cpuAccumulate(const Device&, const float* index, const float* gradOutput, int64_t n, int64_t nOutput, float scale,
                   float* gradWeight) {
  for (int64_t i = 0; i < n; ++i) {
    float* row = gradWeight + math::lookupRow(index[i]) * nOutput;
    const float* g = gradOutput + i * nOutput;
    for (int64_t k = 0; k < nOutput; ++k) row[k] += scale * g[k];
  }
}

}  // namespace

LookupKernels lookupKernels() { return {&cpuGather, &cpuAccumulate}; }

}  // namespace nn::cpu
