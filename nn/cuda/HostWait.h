// The host's waits for CUDA devices, every one of them: the backend calls the CUDA runtime's
// synchronising functions only through these, which count each wait (Note [Host
// synchronisations] in nn/backend/Backend.h) with one relaxed atomic increment and check the
// call. While a WaitWatch lives, a wait polls its stream or event instead of blocking in the
// runtime, and runs the watches about every millisecond.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>

namespace nn::cuda {

/// cudaStreamSynchronize(stream), counted.
void waitForStream(cudaStream_t stream);
/// cudaEventSynchronize(event), counted.
void waitForEvent(cudaEvent_t event);
/// cudaDeviceSynchronize() of the current device, counted.
void waitForDevice();
/// The waits so far, of every device and thread.
int64_t hostWaitCount();

/// A check that every wait above runs, on its own thread, about every millisecond while it
/// waits, for as long as the watch lives: the deadline of work that may never finish, an NCCL
/// collective whose peer rank died (nn/distributed/NcclGroup.cpp). The check may throw (the
/// wait throws it) or end the process. Checks of all watches run one at a time.
class WaitWatch {
 public:
  explicit WaitWatch(std::function<void()> check);
  ~WaitWatch();
  WaitWatch(const WaitWatch&) = delete;
  WaitWatch& operator=(const WaitWatch&) = delete;

 private:
  friend void runWaitWatches();
  std::function<void()> check_;
};

/// Runs every live watch's check once (what a waiting poll does).
void runWaitWatches();

}  // namespace nn::cuda
