// The CUDA backend's own kernels, behind launchers with plain C++ signatures: the .cpp files
// of cunn (compiled by the C++ compiler) call these, only Kernels.cu is compiled by nvcc.
// Each launcher queues its kernel on `stream`, which must belong to the current device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace nn {

/// ptr[i] = value for i < count.
void launchFill(float* ptr, size_t count, float value, cudaStream_t stream);
/// dst[i] += src[i] for i < count (both on the current device).
void launchAdd(float* dst, const float* src, size_t count, cudaStream_t stream);

}  // namespace nn
