// HostCommunicator: the collectives of logical CPU devices, whose memory the host reads
// directly: sums and copies in rank order, so that results do not depend on timing. The work
// of one call can be spread over threads (the device threads), by chunks of elements.
#pragma once

#include <vector>

#include "nn/backend/Communicator.h"

namespace nn {

class HostCommunicator : public Communicator {
 public:
  /// The collectives of `devices` (CPU devices). With `parallel`, one call's work is cut into
  /// one chunk of elements per device and run by it; each element is still summed in rank
  /// order, so the results equal the serial ones bit for bit.
  explicit HostCommunicator(std::vector<Device> devices, Backend::ParallelFor parallel = nullptr);

  void reduce(const std::vector<Tensor>& tensors) override;
  void broadcast(const std::vector<Tensor>& tensors) override;
  void allReduce(const std::vector<Tensor>& tensors) override;
  /// On the calling thread: a batch's slices are small beside a step, and spreading them over
  /// the device threads would cost a round of them.
  void scatter(const Tensor& source, const std::vector<Tensor>& parts) override;
  std::string name() const override { return "host copies"; }

 private:
  /// Calls work(begin, end) over [0, n) in chunks, one chunk per part.
  void forChunks(int64_t n, FunctionRef<void(int64_t, int64_t)> work);

  std::vector<Device> devices_;
  Backend::ParallelFor parallel_;
};

}  // namespace nn
