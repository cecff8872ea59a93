// The compute threads of the CPU devices: one WorkerThreads of numThreads() - 1 workers per
// device, made when that device first runs parts in parallel.
#include "nn/runtime/ComputeThreads.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>

#include "nn/backend/Backend.h"
#include "nn/runtime/WorkerThreads.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

std::atomic<int> gThreads{1};

struct DevicePool {
  std::mutex busy;  // held by the thread whose parts the workers run
  std::unique_ptr<WorkerThreads> workers;
};

DevicePool& poolOf(const Device& device) {
  static DevicePool pools[kMaxCpuDevices];
  return pools[device.index()];
}

}  // namespace

void setNumThreads(int threads) {
  NN_CHECK(threads >= 1 && threads <= kMaxThreads,
           "nn::setNumThreads: expected 1 to " << kMaxThreads << " threads per device, got " << threads);
  cpuBackend().setComputeThreads(threads);
  gThreads = threads;
}

int numThreads() { return gThreads; }

int parallelParts(const Device& device, int64_t work) {
  if (!device.isCpu()) return 1;
  const int64_t parts = std::min<int64_t>(gThreads, work);
  return parts < 1 ? 1 : static_cast<int>(parts);
}

void parallelFor(const Device& device, int parts, FunctionRef<void(int)> part) {
  NN_CHECK(parts >= 1, "nn::parallelFor: expected at least 1 part, got " << parts);
  NN_CHECK(device.isCpu() || parts == 1, "nn::parallelFor: " << device.str() << " runs its kernels in one part");
  DevicePool* pool = parts > 1 ? &poolOf(device) : nullptr;
  std::unique_lock<std::mutex> lock;
  if (pool) lock = std::unique_lock<std::mutex>(pool->busy, std::try_to_lock);
  if (!pool || !lock.owns_lock()) {
    for (int p = 0; p < parts; ++p) part(p);
    return;
  }
  if (!pool->workers || pool->workers->size() + 1 < static_cast<size_t>(parts))
    pool->workers = std::make_unique<WorkerThreads>(static_cast<size_t>(parts - 1));
  const std::exception_ptr error = pool->workers->run(
      static_cast<size_t>(parts), [&](size_t p) { part(static_cast<int>(p)); }, true);
  if (error) std::rethrow_exception(error);
}

Range partRange(int64_t rows, int parts, int p) {
  const int64_t base = rows / parts, extra = rows % parts;
  const int64_t begin = p * base + std::min<int64_t>(p, extra);
  return {begin, begin + base + (p < extra ? 1 : 0)};
}

}  // namespace nn
