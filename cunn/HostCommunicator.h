// HostCommunicator: collectives for devices whose memory the host reads directly (logical
// CPU devices): sums and copies in rank order, so results do not depend on timing. The
// work of one call can be spread over threads (the device threads), by chunks of elements.
#pragma once

#include <functional>

#include "cunn/Communicator.h"
#include "cunn/DeviceThreads.h"

namespace nn {

class HostCommunicator : public Communicator {
 public:
  /// Runs task(i) for i < count at once and returns when all are done.
  using ParallelFor = std::function<void(size_t count, FunctionRef<void(size_t)> task)>;

  /// One call's work in the caller's thread.
  HostCommunicator() = default;
  /// One call's work cut into `parts` chunks of elements, run by `parallel`. Each element is
  /// still summed in rank order, so the results equal the serial ones bit for bit.
  HostCommunicator(size_t parts, ParallelFor parallel);

  void reduce(const std::vector<Tensor>& tensors) override;
  void broadcast(const std::vector<Tensor>& tensors) override;
  void allReduce(const std::vector<Tensor>& tensors) override;
  std::string name() const override { return "host copies"; }

 private:
  /// Calls work(begin, end) over [0, n) in chunks, one chunk per part.
  void forChunks(int64_t n, FunctionRef<void(int64_t, int64_t)> work);

  size_t parts_ = 1;
  ParallelFor parallel_;
};

}  // namespace nn
