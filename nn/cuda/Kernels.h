// The CUDA backend's own kernels that are not in a table, behind launchers with plain C++
// signatures, for the .cpp files of the backend (compiled by the C++ compiler); they are
// defined in TensorKernels.cu. Each launcher queues its kernel on `stream`, which must belong
// to the current device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "nn/backend/TensorKernels.h"

namespace nn {

/// dst[i] += src[i] for i < count (both on the current device).
void launchAdd(float* dst, const float* src, size_t count, cudaStream_t stream);
/// Element e of src (seen as srcView) to element e of dst (seen as dstView), for e < count.
void launchCopyStrided(float* dst, const StridedView& dstView, const float* src, const StridedView& srcView,
                       size_t count, cudaStream_t stream);

}  // namespace nn
