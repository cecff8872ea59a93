// The host's waits for CUDA devices, counted, and polled where a watch lives.
#include "nn/cuda/HostWait.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "nn/cuda/Check.h"

namespace nn::cuda {

namespace {

std::atomic<int64_t> gWaits{0};

// The live watches, and how many (read without the lock by every wait).
std::mutex gWatchMutex;
std::vector<WaitWatch*>& watches() {
  static std::vector<WaitWatch*>* live = new std::vector<WaitWatch*>();
  return *live;
}
std::atomic<int> gWatching{0};

// Counted before the call: a wait that fails still made the host wait.
void count() { gWaits.fetch_add(1, std::memory_order_relaxed); }

// Polls `query` (cudaStreamQuery or cudaEventQuery of the awaited work) until it succeeds,
// running the watches about every millisecond; `call` names the query in a failure's message.
template <typename Query>
void poll(Query query, const char* call) {
  using Clock = std::chrono::steady_clock;
  auto nextWatch = Clock::now();
  for (int polls = 0;; ++polls) {
    const cudaError_t status = query();
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) checkCuda(status, call, __FILE__, __LINE__);
    cudaGetLastError();  // not a failure: the work is still running
    if (Clock::now() >= nextWatch) {
      runWaitWatches();
      nextWatch = Clock::now() + std::chrono::milliseconds(1);
    }
    // At once for a while (short waits), then letting the CPU go.
    if (polls > 100) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace

WaitWatch::WaitWatch(std::function<void()> check) : check_(std::move(check)) {
  std::lock_guard<std::mutex> lock(gWatchMutex);
  watches().push_back(this);
  gWatching.fetch_add(1);
}

WaitWatch::~WaitWatch() {
  std::lock_guard<std::mutex> lock(gWatchMutex);
  watches().erase(std::find(watches().begin(), watches().end(), this));
  gWatching.fetch_sub(1);
}

void runWaitWatches() {
  std::lock_guard<std::mutex> lock(gWatchMutex);
  for (WaitWatch* watch : watches()) watch->check_();
}

void waitForStream(cudaStream_t stream) {
  count();
  if (gWatching.load() > 0) return poll([&] { return cudaStreamQuery(stream); }, "cudaStreamQuery(stream)");
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

void waitForEvent(cudaEvent_t event) {
  count();
  if (gWatching.load() > 0) return poll([&] { return cudaEventQuery(event); }, "cudaEventQuery(event)");
  CUDA_CHECK(cudaEventSynchronize(event));
}

void waitForDevice() {
  count();
  CUDA_CHECK(cudaDeviceSynchronize());
}

int64_t hostWaitCount() { return gWaits.load(std::memory_order_relaxed); }

}  // namespace nn::cuda
