// WorkerThreads: long-lived workers that watch briefly for their next task before sleeping.
#include "nn/runtime/WorkerThreads.h"

#include <sched.h>

#include <algorithm>
#include <chrono>

#include "nn/runtime/Autocast.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

// After a task a worker watches for the next one this long before it sleeps. The next task of
// a training step, and the next step's first after the trainer's SGD step and batch, come
// sooner, and a sleeping thread wakes late, the more so on a virtual machine whose idle core had
// halted (bench/README.md, "Measurements behind the code"). Watching yields the core to any
// thread that wants it, but a watcher that shares its core with a busy thread still takes turns
// with it: where the process's workers outnumber its cores (more devices or compute threads than
// cores, as in tests of eight devices), a worker watches only kShortWatch, as libgomp shortens
// its spinning when oversubscribed.
constexpr std::chrono::microseconds kWatch{2000};
constexpr std::chrono::microseconds kShortWatch{50};
// Once the first task of a round is done its core is free, so the caller watches for the
// last one, up to this long, instead of sleeping until it is woken. A caller that ran task 0
// itself watches from then on: a step hands out dozens of rounds, and a wake-up ending each
// cost more than the watching.
constexpr std::chrono::microseconds kLastWatch{2000};

// Workers of every WorkerThreads alive in the process.
std::atomic<size_t> liveWorkers{0};

// How long a worker watches for its next task now.
std::chrono::microseconds watchTime() {
  return liveWorkers.load(std::memory_order_relaxed) <= usableCores() ? kWatch : kShortWatch;
}

}  // namespace

size_t usableCores() {
  static const size_t cores = [] {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<size_t>(CPU_COUNT(&set));
    return static_cast<size_t>(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return cores;
}

WorkerThreads::WorkerThreads(size_t count, std::function<void(size_t)> start)
    : errors_(count), start_(std::move(start)) {
  threads_.reserve(count);
  try {
    for (size_t i = 0; i < count; ++i) threads_.emplace_back([this, i] { loop(i); });
  } catch (const std::exception& e) {
    // The system refused a thread (a process limit, memory for its stack): the ones started
    // so far stop and are joined before the members they use go away.
    const size_t started = threads_.size();
    stop();
    throw Error("nn::WorkerThreads: cannot start thread " + std::to_string(started + 1) + " of " +
                std::to_string(count) + ": " + e.what());
  }
}

WorkerThreads::~WorkerThreads() { stop(); }

void WorkerThreads::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void WorkerThreads::loop(size_t index) {
  ++liveWorkers;
  struct Leave {
    ~Leave() { --liveWorkers; }
  } leave;
  uint64_t seen = 0;
  bool started = !start_;
  while (true) {
    const FunctionRef<void(size_t)>* task;
    size_t offset;
    DType autocast;
    const auto until = std::chrono::steady_clock::now() + watchTime();
    while (generation_.load(std::memory_order_acquire) == seen && std::chrono::steady_clock::now() < until)
      std::this_thread::yield();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      if (index >= workerTasks_) continue;
      task = task_;
      offset = offset_;
      autocast = autocast_;
    }
    std::exception_ptr error;
    try {
      if (!started) {
        start_(index);
        started = true;
      }
      setAutocastType(autocast);
      (*task)(index + offset);
    } catch (...) {
      error = std::current_exception();
    }
    setAutocastType(DType::Float32);
    std::lock_guard<std::mutex> lock(mutex_);
    // Moved, so that only the caller of run() ever holds (and releases) the exception.
    errors_[index] = std::move(error);
    const size_t left = --pending_;
    // The caller sleeps until the first worker is done (unless it ran task 0), then until the
    // last.
    if (left == 0 || left + 1 == workerTasks_) done_.notify_one();
  }
}

std::exception_ptr WorkerThreads::run(size_t count, FunctionRef<void(size_t)> task, bool callerFirst, size_t* failed) {
  const size_t offset = callerFirst ? 1 : 0;
  NN_CHECK(count <= size() + offset, "WorkerThreads.run: " << count << " tasks for " << size() << " workers"
                                                           << (callerFirst ? " and the caller" : ""));
  const size_t workerTasks = count > offset ? count - offset : 0;
  std::exception_ptr callerError;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    task_ = &task;
    workerTasks_ = workerTasks;
    offset_ = offset;
    autocast_ = autocastType();
    pending_ = workerTasks;
    for (std::exception_ptr& e : errors_) e = nullptr;
    if (workerTasks > 0) {
      ++generation_;
      wake_.notify_all();
    }
  }
  if (callerFirst && count > 0) {
    try {
      task(0);
    } catch (...) {
      callerError = std::current_exception();
    }
  }
  if (workerTasks > 0) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!callerFirst) done_.wait(lock, [&] { return pending_ < workerTasks; });
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
  if (callerError) {
    if (failed) *failed = 0;
    return callerError;
  }
  for (size_t i = 0; i < workerTasks; ++i)
    if (errors_[i]) {
      if (failed) *failed = i + offset;
      return std::move(errors_[i]);
    }
  return nullptr;
}

}  // namespace nn
