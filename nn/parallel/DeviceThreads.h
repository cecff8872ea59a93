// DeviceThreads: one long-lived worker thread per device (nn/runtime/WorkerThreads.h), where the
// devices are CPU devices the caller's own thread for the first. run() hands each its part of a
// step and waits for all of them; the first failure comes back on the caller's thread with the
// device named, and every worker is idle again before run() returns. The thread of a CUDA device
// runs its tasks with that device current.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/runtime/WorkerThreads.h"
#include "nn/tensor/Device.h"
#include "nn/tensor/FunctionRef.h"

namespace nn {

/// One thread per device, each with its device current, for running a step's parts in parallel:
/// a worker thread of its own for each CUDA device, and for each CPU device but the first, whose
/// tasks the caller's thread runs (Note [The caller as the first device] in DeviceThreads.cpp).
class DeviceThreads {
 public:
  /// Starts one thread per device of `devices` (thread i for devices[i]); they live as long as this object.
  explicit DeviceThreads(std::vector<Device> devices);

  /// Runs task(i) on the thread of device i, for i < count, and waits for all of them.
  /// If any throw, rethrows the first (in device order) as an nn::Error that names the device.
  /// A call from inside a task (the first CPU device's, on the caller's thread) is an nn::Error.
  void run(size_t count, FunctionRef<void(size_t)> task);
  /// run() on every device.
  void runAll(FunctionRef<void(size_t)> task) { run(devices_.size(), task); }

  /// The number of devices (and threads).
  size_t size() const { return devices_.size(); }
  /// The devices, in the order given; task(i) runs on devices()[i]'s thread.
  const std::vector<Device>& devices() const { return devices_; }
  /// How many times run() has handed out tasks, for tests that count a step's rounds.
  int64_t rounds() const { return rounds_; }
  /// Whether the caller's thread runs the first device's tasks (CPU devices).
  bool callerRunsFirst() const { return callerFirst_; }
  /// True while run() runs, as the caller's thread sees it: inside the first device's task there.
  bool inRound() const { return inRound_; }

 private:
  // The device that worker 0 serves: 1 where the caller runs the first device's tasks.
  size_t firstWorkerDevice() const { return callerFirst_ ? 1 : 0; }

  std::vector<Device> devices_;
  bool callerFirst_;
  WorkerThreads workers_;
  int64_t rounds_ = 0;  // run() is called by one thread at a time
  bool inRound_ = false;
};

}  // namespace nn
