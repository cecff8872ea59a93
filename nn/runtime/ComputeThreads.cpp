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

namespace {

// The innermost ScopedLentThreads of this thread, or null.
ScopedLentThreads*& innermostLent() {
  thread_local ScopedLentThreads* scope = nullptr;
  return scope;
}

}  // namespace

ScopedLentThreads::ScopedLentThreads(const Device& device, int threads, Lender& lender)
    : device_(device),
      threads_(device.isCpu() && threads > 1 ? threads : 1),
      lender_(&lender),
      enclosing_(innermostLent()) {
  innermostLent() = this;
}

ScopedLentThreads::ScopedLentThreads()
    : device_(Device::cpu()), threads_(1), lender_(nullptr), enclosing_(innermostLent()) {
  innermostLent() = this;
}

ScopedLentThreads::~ScopedLentThreads() { innermostLent() = enclosing_; }

ScopedLentThreads* ScopedLentThreads::lentFor(const Device& device) {
  ScopedLentThreads* scope = innermostLent();
  return scope && scope->threads_ > 1 && !scope->busy_ && scope->device_ == device ? scope : nullptr;
}

void ScopedLentThreads::run(int parts, FunctionRef<void(int)> part) {
  NN_CHECK(parts >= 1 && parts <= threads_,
           "nn::ScopedLentThreads.run: expected 1 to " << threads_ << " parts, got " << parts);
  busy_ = true;
  struct Done {
    bool& busy;
    ~Done() { busy = false; }
  } done{busy_};
  lender_->runParts(parts, part);
}

int parallelParts(const Device& device, int64_t work) {
  if (!device.isCpu()) return 1;
  int threads = gThreads;
  if (const ScopedLentThreads* lent = ScopedLentThreads::lentFor(device)) threads = std::max(threads, lent->threads());
  const int64_t parts = std::min<int64_t>(threads, work);
  return parts < 1 ? 1 : static_cast<int>(parts);
}

void parallelFor(const Device& device, int parts, FunctionRef<void(int)> part) {
  NN_CHECK(parts >= 1, "nn::parallelFor: expected at least 1 part, got " << parts);
  NN_CHECK(device.isCpu() || parts == 1, "nn::parallelFor: " << device.str() << " runs its kernels in one part");
  // Lent threads first: they are idle while this thread runs alone. Beyond them, the device's own.
  ScopedLentThreads* lent = parts > 1 ? ScopedLentThreads::lentFor(device) : nullptr;
  if (lent && parts <= lent->threads()) {
    lent->run(parts, part);
    return;
  }
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
