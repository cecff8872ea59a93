// The CUDA backend's own kernels (fill, the tensor arithmetic, the strided copy), behind
// launchers with plain C++ signatures: the .cpp files of cunn (compiled by the C++ compiler)
// call these, only Kernels.cu is compiled by nvcc.
// Each launcher queues its kernel on `stream`, which must belong to the current device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "nn/DeviceBackend.h"

namespace nn {

/// ptr[i] = value for i < count.
void launchFill(float* ptr, size_t count, float value, cudaStream_t stream);
/// dst[i] += src[i] for i < count (both on the current device).
void launchAdd(float* dst, const float* src, size_t count, cudaStream_t stream);
/// dst[i] = math::addScaled(dst[i], alpha, src[i]) for i < count.
void launchAddScaled(float* dst, const float* src, size_t count, float alpha, cudaStream_t stream);
/// ptr[i] = math::multiply(ptr[i], value) for i < count.
void launchScale(float* ptr, size_t count, float value, cudaStream_t stream);
/// dst[i] = math::multiply(dst[i], src[i]) for i < count.
void launchMultiply(float* dst, const float* src, size_t count, cudaStream_t stream);
/// Element e of src (seen as srcView) to element e of dst (seen as dstView), for e < count.
void launchCopyStrided(float* dst, const StridedView& dstView, const float* src, const StridedView& srcView,
                       size_t count, cudaStream_t stream);

}  // namespace nn
