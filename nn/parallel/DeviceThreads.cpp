// DeviceThreads: one worker thread per device, the caller itself for the first CPU device.
#include "nn/parallel/DeviceThreads.h"

#include <string>

#include "nn/backend/Backend.h"
#include "nn/core/GradientObserver.h"
#include "nn/core/StatisticsGroup.h"
#include "nn/runtime/ComputeThreads.h"
#include "nn/tensor/Error.h"

namespace nn {

// Note [The caller as the first device]
// Where the devices are CPU devices, the caller's thread runs the first device's task of every
// round itself (WorkerThreads' callerFirst), and a worker thread serves each of the others. The
// caller waits out every round anyway, so a thread of its own for the first device only added a
// hand-out and a wake-up to each round and a third thread to share the cores with (measured in
// bench/README.md, "The synchronous limit"). A CPU device has nothing to make current, and the
// caller's thread-local context is set aside for the task as a device thread has none: no
// gradient observer (a replica's gradients are final only once the table has summed them), no
// statistics group and no threads lent (nn::LendDeviceThreads: the other devices' threads are
// busy with their own tasks). CUDA devices keep a thread each, with the device current.
DeviceThreads::DeviceThreads(std::vector<Device> devices)
    : devices_(std::move(devices)),
      callerFirst_(!devices_.empty() && devices_[0].isCpu()),
      workers_(devices_.size() - firstWorkerDevice(), [this](size_t w) {
        backendOf(devices_[w + firstWorkerDevice()]).makeCurrent(devices_[w + firstWorkerDevice()]);
      }) {}

void DeviceThreads::run(size_t count, FunctionRef<void(size_t)> task) {
  NN_CHECK(count <= devices_.size(), "DeviceThreads.run: " << count << " tasks for " << devices_.size() << " devices");
  NN_CHECK(!inRound_, "DeviceThreads.run: called from inside a round's task on the caller's thread, which runs the "
                          << "first device's (" << devices_[0].str() << ") tasks; a round cannot start another");
  size_t failed = 0;
  ++rounds_;
  struct InRound {
    bool& flag;
    explicit InRound(bool& f) : flag(f) { flag = true; }
    ~InRound() { flag = false; }
  } inRound(inRound_);
  const auto taskOnItsThread = [&](size_t i) {
    if (i == 0 && callerFirst_) {
      ScopedGradientObserver noObserver(nullptr);
      ScopedStatisticsGroup noGroup(nullptr);
      ScopedLentThreads noLentThreads;
      task(i);
    } else {
      task(i);
    }
  };
  const std::exception_ptr error = workers_.run(count, taskOnItsThread, callerFirst_, &failed);
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
