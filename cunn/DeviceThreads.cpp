// DeviceThreads: one worker thread per device.
#include "cunn/DeviceThreads.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <string>

#include "cunn/cuda/Check.h"
#include "nn/Error.h"

namespace nn {

namespace {

// After a task a worker watches for the next one this long before it sleeps: in a training
// step the next task follows within tens of microseconds, and waking a sleeping thread
// costs about 40 us (a LeNet step hands out five rounds). Watching yields the core to any
// thread that wants it.
constexpr std::chrono::microseconds kWatch{50};
// Once the first worker of a round is done its core is free, so the caller watches for the
// last one, up to this long, instead of sleeping until it is woken.
constexpr std::chrono::microseconds kLastWatch{2000};

}  // namespace

DeviceThreads::DeviceThreads(std::vector<Device> devices) : devices_(std::move(devices)), workers_(devices_.size()) {
  for (size_t i = 0; i < workers_.size(); ++i) workers_[i].thread = std::thread([this, i] { loop(i); });
}

DeviceThreads::~DeviceThreads() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (Worker& w : workers_) w.thread.join();
}

void DeviceThreads::loop(size_t index) {
  uint64_t seen = 0;
  // The thread of a CUDA device makes that device current before its first task and keeps
  // it, so that tasks need no device setup of their own.
  bool deviceCurrent = !devices_[index].isCuda();
  while (true) {
    const FunctionRef<void(size_t)>* task;
    const auto until = std::chrono::steady_clock::now() + kWatch;
    while (generation_.load(std::memory_order_acquire) == seen && std::chrono::steady_clock::now() < until)
      std::this_thread::yield();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      if (index >= taskCount_) continue;
      task = task_;
    }
    std::exception_ptr error;
    try {
      if (!deviceCurrent) {
        CUDA_CHECK(cudaSetDevice(devices_[index].index()));
        deviceCurrent = true;
      }
      (*task)(index);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    // Moved, so that only the caller of run() ever holds (and releases) the exception.
    workers_[index].error = std::move(error);
    const size_t left = --pending_;
    // The caller sleeps until the first worker is done, then until the last.
    if (left == 0 || left + 1 == taskCount_) done_.notify_one();
  }
}

void DeviceThreads::run(size_t count, FunctionRef<void(size_t)> task) {
  NN_CHECK(count <= devices_.size(), "DeviceThreads.run: " << count << " tasks for " << devices_.size() << " devices");
  if (count == 0) return;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    task_ = &task;
    taskCount_ = count;
    pending_ = count;
    for (Worker& w : workers_) w.error = nullptr;
    ++generation_;
    wake_.notify_all();
    done_.wait(lock, [&] { return pending_ < count; });
    if (pending_ > 0) {
      lock.unlock();
      const auto until = std::chrono::steady_clock::now() + kLastWatch;
      while (pending_.load(std::memory_order_acquire) > 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
      lock.lock();
      done_.wait(lock, [&] { return pending_ == 0; });
    }
    task_ = nullptr;
  }
  for (size_t i = 0; i < count; ++i) {
    if (!workers_[i].error) continue;
    try {
      std::rethrow_exception(workers_[i].error);
    } catch (const std::exception& e) {
      throw Error("on " + devices_[i].str() + ": " + e.what());
    } catch (...) {
      throw Error("on " + devices_[i].str() + ": unknown exception");
    }
  }
}

}  // namespace nn
