// The compute threads of the CPU devices (intra-op parallelism, as torch.set_num_threads):
// a kernel on a CPU device cuts its work into parts, one per compute thread of that device,
// runs part 0 on the calling thread and the others on the device's own worker threads, and
// combines them in part order, so that its results do not depend on which thread ran what.
// With one thread (the default) every part runs on the calling thread and no worker exists.
#pragma once

#include <cstdint>
#include <string>

#include "nn/tensor/Device.h"
#include "nn/tensor/FunctionRef.h"

namespace nn {

/// The most compute threads a CPU device may have: far more than any machine's cores, and few
/// enough that every CPU device's threads together stay within a system's process limits.
constexpr int kMaxThreads = 256;

/// Sets the compute threads of each CPU device (1 to kMaxThreads). OpenBLAS then runs
/// single-threaded inside each part, so that the threads do not oversubscribe the cores.
void setNumThreads(int threads);
/// The compute threads of each CPU device.
int numThreads();

/// What runs the CPU devices' work, in one line: the CPU's model and features, the level of the
/// library's own kernels (NN_CPU_ISA) and the BLAS with its kernels and who chose them, e.g.
/// "CPU: AMD EPYC (family 25, model 17) with AVX2, AVX-512, AVX512-BF16; kernels: avx512; BLAS:
/// OpenBLAS 0.3.21, Cooperlake kernels (chosen by the CPU's features)". The examples print it
/// first and the benchmarks beside their figures.
/// Defined by the CPU backend (nn/cpu), which the library always links.
std::string cpuInfo();

/// Parts to cut `work` independent items into on `device`: numThreads(), at most `work`,
/// at least 1.
int parallelParts(const Device& device, int64_t work);

/// Runs part(p) for p < parts and returns when all are done; part 0 runs on the calling
/// thread. The first exception (in part order) is rethrown. Where the device's threads are
/// busy (a part that itself calls parallelFor, or another thread using the same device),
/// the parts run one after another on the calling thread.
void parallelFor(const Device& device, int parts, FunctionRef<void(int)> part);

/// Threads lent to this thread's kernels on one CPU device while the scope lives
/// (nn::LendDeviceThreads lends a DataParallelTable's, idle between its calls): there
/// parallelParts gives up to `threads` parts where numThreads() gives fewer, and parallelFor
/// has its lender run up to `threads` parts, part 0 on this thread and each other on a lent
/// thread. A parallelFor inside a lent part runs its parts one after another, as on a busy
/// device. The innermost scope of a thread holds; other threads see none.
class ScopedLentThreads {
 public:
  /// What lends the threads.
  class Lender {
   public:
    /// Runs part(p) for p < parts, part 0 on the calling thread, the others on the lent threads.
    virtual void runParts(int parts, FunctionRef<void(int)> part) = 0;

   protected:
    ~Lender() = default;
  };

  /// Lends `threads` threads (this one included) of `lender`, which must outlive the scope, for
  /// `device`'s kernels; fewer than 2 lend none.
  ScopedLentThreads(const Device& device, int threads, Lender& lender);
  /// Lends none while it lives, whatever an enclosing scope lends: for work that must run as it
  /// would on a thread of its own (a DataParallelTable's first device's task on the caller's thread).
  ScopedLentThreads();
  ~ScopedLentThreads();
  ScopedLentThreads(const ScopedLentThreads&) = delete;
  ScopedLentThreads& operator=(const ScopedLentThreads&) = delete;

  /// The scope that holds on this thread for `device`'s kernels now, or null: none, one that
  /// lends none, one for another device, or one whose threads run a call's parts already.
  static ScopedLentThreads* lentFor(const Device& device);
  /// The threads lent, this one included.
  int threads() const { return threads_; }
  /// Runs part(p) for p < parts (at most threads()) on the lent threads, part 0 on this one.
  void run(int parts, FunctionRef<void(int)> part);

 private:
  Device device_;
  int threads_;
  Lender* lender_;
  bool busy_ = false;  // a call's parts run on the lent threads
  ScopedLentThreads* enclosing_;
};

/// A half-open range of rows, [begin, end).
struct Range {
  /// The first row.
  int64_t begin;
  /// One past the last row.
  int64_t end;
};
/// The rows [begin, end) of part p when `rows` rows are cut into `parts` parts whose sizes
/// differ by at most one, the larger first.
Range partRange(int64_t rows, int parts, int p);

/// body(begin, end) over the parts of [0, n), each of at least `grain` items where n allows
/// (a smaller part costs less than handing it to a thread), one per compute thread.
template <typename Body>
void parallelRanges(const Device& device, int64_t n, int64_t grain, Body body) {
  const int parts = parallelParts(device, n / grain);
  parallelFor(device, parts, [&](int p) {
    const Range r = partRange(n, parts, p);
    body(r.begin, r.end);
  });
}

}  // namespace nn
