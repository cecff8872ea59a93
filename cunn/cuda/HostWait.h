// The host's waits for CUDA devices, every one of them: the backend calls the CUDA runtime's
// synchronising functions only through these, which count each wait (Note [Host
// synchronisations] in nn/backend/Backend.h) with one relaxed atomic increment and check the
// call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace nn::cuda {

/// cudaStreamSynchronize(stream), counted.
void waitForStream(cudaStream_t stream);
/// cudaEventSynchronize(event), counted.
void waitForEvent(cudaEvent_t event);
/// cudaDeviceSynchronize() of the current device, counted.
void waitForDevice();
/// The waits so far, of every device and thread.
int64_t hostWaitCount();

}  // namespace nn::cuda
