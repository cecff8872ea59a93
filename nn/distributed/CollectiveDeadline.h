// nn::CollectiveDeadline: the deadline of the collectives that a rank queues on a device
// (NCCL's), which complete on the device, not inside a call that the host waits in. The rank
// notes each collective as it queues it; while the host waits for the device (nn/cuda/
// HostWait.h polls its watches then), poll() forgets the collectives that have completed, and
// where the communicator reports an error, or the oldest collective has run past the group's
// timeout, it calls `fail` with a message naming the rank, the collective and why: the NCCL
// counterpart of the deadline that MpiProcessGroup keeps for its own collectives. Device-neutral
// (the device is reached through the hooks), so that a stand-in can test it without a GPU.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nn/tensor/Tensor.h"

namespace nn {

class CollectiveDeadline {
 public:
  using Clock = std::chrono::steady_clock;

  struct Hooks {
    /// Whether the collective noted with `token` has completed on the device.
    std::function<bool(int64_t token)> completed;
    /// The communicator's asynchronous error, empty while it has none.
    std::function<std::string()> asyncError;
    /// Stops the communicator and ends the job (ncclCommAbort, then MPI_Abort); it must not
    /// return normally (a stand-in throws).
    std::function<void(const std::string& message)> fail;
  };

  CollectiveDeadline(int rank, int size, Hooks hooks);

  /// Notes a collective queued at `now`: `name` ("allReduceSum") of `tensor`; `token` is what
  /// completed() will be asked about. Collectives complete in the order they were queued; those
  /// completed by now are forgotten first.
  void queued(const char* name, const Tensor& tensor, int64_t token, Clock::time_point now = Clock::now());
  /// The collectives noted and not yet seen completed.
  size_t pending() const { return entries_.size(); }
  /// Forgets the collectives that have completed, oldest first; calls fail where the
  /// communicator has an error, or where the oldest still pending was queued more than
  /// `timeoutSeconds` before `now`.
  void poll(double timeoutSeconds, Clock::time_point now = Clock::now());

 private:
  struct Entry {
    const char* name;
    Tensor tensor;
    int64_t token;
    Clock::time_point queuedAt;
  };
  // Forgets the collectives that have completed, oldest first.
  void forgetCompleted();
  // "rank 1 of 2: NCCL allReduceSum of [1000]"
  std::string describe(const Entry& e) const;

  int rank_, size_;
  Hooks hooks_;
  // The pending ones, oldest first; the vector keeps its capacity, so that a steady step
  // allocates nothing.
  std::vector<Entry> entries_;
};

}  // namespace nn
