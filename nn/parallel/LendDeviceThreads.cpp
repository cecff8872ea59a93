// nn::LendDeviceThreads: the table's device threads as a ScopedLentThreads' lender.
#include "nn/parallel/LendDeviceThreads.h"

namespace nn {

namespace {

// The first device of `table`, whose kernels the scope lends threads to (none before add()). A
// scope for a CUDA device or with one thread lends none: ScopedLentThreads sees to that.
Device firstDevice(const DataParallelTable& table) {
  return table.devices().empty() ? Device::cpu() : table.devices()[0];
}

}  // namespace

LendDeviceThreads::LendDeviceThreads(DataParallelTable& table)
    : lender_(table), scope_(firstDevice(table), static_cast<int>(table.devices().size()), lender_) {}

}  // namespace nn
