// DeviceThreads: one long-lived worker thread per device (nn/runtime/WorkerThreads.h). run() hands
// each worker its part of a step and waits for all of them; the first failure comes back on
// the caller's thread with the device named, and every worker is idle again before run()
// returns. The thread of a CUDA device runs its tasks with that device current.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/runtime/WorkerThreads.h"
#include "nn/tensor/Device.h"
#include "nn/tensor/FunctionRef.h"

namespace nn {

/// One worker thread per device, each with its device current, for running a step's parts in parallel.
class DeviceThreads {
 public:
  /// Starts one thread per device of `devices` (thread i for devices[i]); they live as long as this object.
  explicit DeviceThreads(std::vector<Device> devices);

  /// Runs task(i) on the thread of device i, for i < count, and waits for all of them.
  /// If any throw, rethrows the first (in device order) as an nn::Error that names the device.
  void run(size_t count, FunctionRef<void(size_t)> task);
  /// run() on every device.
  void runAll(FunctionRef<void(size_t)> task) { run(devices_.size(), task); }

  /// The number of devices (and threads).
  size_t size() const { return devices_.size(); }
  /// The devices, in the order given; task(i) runs on devices()[i]'s thread.
  const std::vector<Device>& devices() const { return devices_; }
  /// How many times run() has handed out tasks, for tests that count a step's rounds.
  int64_t rounds() const { return rounds_; }

 private:
  std::vector<Device> devices_;
  WorkerThreads workers_;
  int64_t rounds_ = 0;  // run() is called by one thread at a time
};

}  // namespace nn
