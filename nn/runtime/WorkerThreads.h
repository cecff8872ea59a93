// WorkerThreads: a fixed set of long-lived worker threads that run one round of tasks at a
// time: run() hands task i to worker i and returns when every task of the round is done,
// with the first exception (in task order) for the caller to rethrow. DataParallelTable's
// threads (one per device, nn/parallel/DeviceThreads.h) and the compute threads of a CPU device
// (nn/runtime/ComputeThreads.h) are both this. A worker runs its task under the autocast setting
// (nn/runtime/Autocast.h) of the thread that called run(), as that thread would have run it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "nn/tensor/DType.h"
#include "nn/tensor/FunctionRef.h"

namespace nn {

/// The cores this process may run on (its affinity mask), counted once.
size_t usableCores();

/// A fixed set of worker threads that run rounds of tasks (see the top of this file).
class WorkerThreads {
 public:
  /// Starts `count` workers; worker i calls start(i), where given, before its first task.
  /// Where the system cannot start one, an nn::Error saying so, with those started joined.
  explicit WorkerThreads(size_t count, std::function<void(size_t)> start = nullptr);
  ~WorkerThreads();
  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;

  /// Runs task(i) for i < count and waits for all of them. Without callerFirst worker i runs
  /// task i (count <= size()); with it the calling thread runs task 0 meanwhile and worker i
  /// runs task i + 1 (count <= size() + 1). Returns the exception of the first task, in index
  /// order, that threw (null if none) and sets *failed to its index. One round at a time: the
  /// caller serialises calls.
  std::exception_ptr run(size_t count, FunctionRef<void(size_t)> task, bool callerFirst = false,
                         size_t* failed = nullptr);

  /// Number of workers, as given to the constructor.
  size_t size() const { return errors_.size(); }

 private:
  void loop(size_t index);
  /// Stops and joins every worker started.
  void stop();

  std::vector<std::thread> threads_;
  std::vector<std::exception_ptr> errors_;  // of each worker's task in the current round
  std::function<void(size_t)> start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const FunctionRef<void(size_t)>* task_ = nullptr;
  size_t workerTasks_ = 0;  // workers with a task this round
  size_t offset_ = 0;       // worker i runs task i + offset_
  DType autocast_ = DType::Float32;  // the caller's autocast type this round
  // Written under mutex_; atomic so that workers watching for the next task, and the caller
  // watching for the last worker, may read them without it.
  std::atomic<uint64_t> generation_{0};
  std::atomic<size_t> pending_{0};
  bool stopping_ = false;
};

}  // namespace nn
