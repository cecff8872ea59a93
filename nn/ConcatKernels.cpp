// The CPU table of ConcatKernels.
#include "nn/ConcatKernels.h"

#include <algorithm>

#include "nn/KernelTable.h"

namespace nn {

namespace {

void cpuCopyRuns(const Device&, float* dst, int64_t dstStride, const float* src, int64_t srcStride, int64_t runs,
                 int64_t length) {
  for (int64_t r = 0; r < runs; ++r) std::copy(src + r * srcStride, src + r * srcStride + length, dst + r * dstStride);
}

constexpr ConcatKernels kCpuKernels{&cpuCopyRuns};

}  // namespace

const ConcatKernels& concatKernels(const Device& device) {
  return device.isCpu() ? kCpuKernels : KernelTable<ConcatKernels>::of(device, "nn.Concat");
}

void registerConcatKernels(DeviceType type, const ConcatKernels& kernels) {
  KernelTable<ConcatKernels>::install(type, kernels);
}

}  // namespace nn
