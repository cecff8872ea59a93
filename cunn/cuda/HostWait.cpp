// The host's waits for CUDA devices, counted.
#include "cunn/cuda/HostWait.h"

#include <atomic>

#include "cunn/cuda/Check.h"

namespace nn::cuda {

namespace {

std::atomic<int64_t> gWaits{0};

// Counted before the call: a wait that fails still made the host wait.
void count() { gWaits.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

void waitForStream(cudaStream_t stream) {
  count();
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

void waitForEvent(cudaEvent_t event) {
  count();
  CUDA_CHECK(cudaEventSynchronize(event));
}

void waitForDevice() {
  count();
  CUDA_CHECK(cudaDeviceSynchronize());
}

int64_t hostWaitCount() { return gWaits.load(std::memory_order_relaxed); }

}  // namespace nn::cuda
