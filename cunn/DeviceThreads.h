// DeviceThreads: one long-lived worker thread per device. run() hands each worker its part
// of a step and waits for all of them; the first failure comes back on the caller's thread
// with the device named, and every worker is idle again before run() returns. The thread of
// a CUDA device runs its tasks with that device current.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "nn/Device.h"

namespace nn {

/// A non-owning reference to a callable, like std::function without its allocation: a
/// training step hands each device its work through one of these.
template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F>
  FunctionRef(F&& f)  // NOLINT: converts from any callable, as std::function does
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, Args... args) -> R { return (*static_cast<std::remove_reference_t<F>*>(o))(args...); }) {}
  R operator()(Args... args) const { return call_(object_, args...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

class DeviceThreads {
 public:
  explicit DeviceThreads(std::vector<Device> devices);
  ~DeviceThreads();
  DeviceThreads(const DeviceThreads&) = delete;
  DeviceThreads& operator=(const DeviceThreads&) = delete;

  /// Runs task(i) on the thread of device i, for i < count, and waits for all of them.
  /// If any throw, rethrows the first (in device order) as an nn::Error that names the device.
  void run(size_t count, FunctionRef<void(size_t)> task);
  /// run() on every device.
  void runAll(FunctionRef<void(size_t)> task) { run(devices_.size(), task); }

  size_t size() const { return devices_.size(); }
  const std::vector<Device>& devices() const { return devices_; }

 private:
  struct Worker {
    std::thread thread;
    std::exception_ptr error;
  };
  void loop(size_t index);

  std::vector<Device> devices_;
  std::vector<Worker> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const FunctionRef<void(size_t)>* task_ = nullptr;
  size_t taskCount_ = 0;
  // Written under mutex_; atomic so that workers watching for the next task, and the caller
  // watching for the last worker, may read them without it.
  std::atomic<uint64_t> generation_{0};
  std::atomic<size_t> pending_{0};
  bool stopping_ = false;
};

}  // namespace nn
