// nn::LendDeviceThreads: a scope in which a DataParallelTable's device threads, idle between its
// calls, run the parts of the caller's own kernels on the table's first device: the optimizer's
// step, the next batch (the table's zeroGradParameters and updateParameters lend them
// themselves). PyTorch's DataParallel runs that work on the intra-op threads of every core; here
// each device has the compute threads it was given (nn::setNumThreads), one by default, and the
// others' cores would wait.
#pragma once

#include "nn/parallel/DataParallelTable.h"
#include "nn/runtime/ComputeThreads.h"

namespace nn {

/// While it lives, the kernels this thread runs on `table`'s first device, where that is a CPU
/// device, cut their work into one part per device of the table (where numThreads() gives fewer)
/// and run the parts on the table's device threads, part 0 on this thread. A call of the table
/// inside the scope works as without it: in its rounds every device thread runs its own task.
/// Elsewhere (CUDA devices, a table of one device) it changes nothing. The table must outlive it.
///
/// Kernels run here as they do with that many compute threads (nn::setNumThreads): element by
/// element (an optimizer's step, fills, copies, conversions), the same floats as on one thread;
/// a kernel whose sums are cut by its parts (a convolution's weight gradient, a norm) sums them
/// in part order, which may round otherwise than one part does.
///
///     nn::LendDeviceThreads lend(*table);
///     optimizer.step();
class LendDeviceThreads {
 public:
  explicit LendDeviceThreads(DataParallelTable& table);
  LendDeviceThreads(const LendDeviceThreads&) = delete;
  LendDeviceThreads& operator=(const LendDeviceThreads&) = delete;

 private:
  // The scope's lender: the table's device threads.
  struct Lender final : ScopedLentThreads::Lender {
    explicit Lender(DataParallelTable& t) : table(t) {}
    void runParts(int parts, FunctionRef<void(int)> part) override { table.runLentParts(parts, part); }
    DataParallelTable& table;
  };

  // Before scope_, which refers to it.
  Lender lender_;
  ScopedLentThreads scope_;
};

}  // namespace nn
