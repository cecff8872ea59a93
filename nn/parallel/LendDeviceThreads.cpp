// nn::LendDeviceThreads: the table's device threads as a ScopedLentThreads' runner.
#include "nn/parallel/LendDeviceThreads.h"

namespace nn {

namespace {

// The threads a table lends: one per device where its devices are CPU devices and the caller's
// thread runs the first's tasks (Note [The caller as the first device]); none otherwise.
int lendableThreads(const DataParallelTable& table) {
  const std::vector<Device>& devices = table.devices();
  return devices.size() > 1 && devices[0].isCpu() ? static_cast<int>(devices.size()) : 1;
}

Device firstDevice(const DataParallelTable& table) {
  return table.devices().empty() ? Device::cpu() : table.devices()[0];
}

}  // namespace

LendDeviceThreads::LendDeviceThreads(DataParallelTable& table)
    : lender_(table), scope_(firstDevice(table), lendableThreads(table), lender_) {}

// Part p runs on device p's thread, part 0 on the caller's: the table's threads take no call's
// rounds meanwhile (one call at a time), and this runs no round of its own inside one.
void DataParallelTable::runLentParts(int parts, FunctionRef<void(int)> part) {
  OneCall call(*this, "a kernel's parts on its lent device threads", /*timed=*/false);
  threads_->run(static_cast<size_t>(parts), [&](size_t p) { part(static_cast<int>(p)); });
}

}  // namespace nn
