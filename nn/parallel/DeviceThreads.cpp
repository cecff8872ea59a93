// DeviceThreads: one worker thread per device.
#include "nn/parallel/DeviceThreads.h"

#include <string>

#include "nn/backend/Backend.h"
#include "nn/tensor/Error.h"

namespace nn {

// The thread of a device makes that device current before its first task and keeps it
// (on a CUDA device; a CPU device has nothing to set), so that tasks need no device setup.
DeviceThreads::DeviceThreads(std::vector<Device> devices)
    : devices_(std::move(devices)),
      workers_(devices_.size(), [this](size_t i) { backendOf(devices_[i]).makeCurrent(devices_[i]); }) {}

void DeviceThreads::run(size_t count, FunctionRef<void(size_t)> task) {
  NN_CHECK(count <= devices_.size(), "DeviceThreads.run: " << count << " tasks for " << devices_.size() << " devices");
  size_t failed = 0;
  ++rounds_;
  const std::exception_ptr error = workers_.run(count, task, /*callerFirst=*/false, &failed);
  if (!error) return;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    throw Error("on " + devices_[failed].str() + ": " + e.what());
  } catch (...) {
    throw Error("on " + devices_[failed].str() + ": unknown exception");
  }
}

}  // namespace nn
