// PeerCommunicator: the collectives of DataParallelTable over CUDA devices without NCCL:
// every rank's tensor is copied to the first device (peer to peer where the pair allows it,
// else through pinned host memory) and added there by a kernel, in rank order; a broadcast
// copies the first device's tensor to the others, and a scatter each rank's part of it.
#pragma once

#include <vector>

#include "nn/backend/Communicator.h"

namespace nn {

class PeerCommunicator : public Communicator {
 public:
  /// Rank i is devices[i]: distinct CUDA devices.
  explicit PeerCommunicator(std::vector<Device> devices);

  /// Each call takes tensors[i] on devices[i] and queues the collective on the devices'
  /// streams: later work on those devices, and copies to the host, see its result (Note [One
  /// stream per device] in CudaBackend.h); the host does not wait.
  /// Sums are taken in rank order, as HostCommunicator's, so they match a host sum exactly.
  void reduce(const std::vector<Tensor>& tensors) override;
  void broadcast(const std::vector<Tensor>& tensors) override;
  void allReduce(const std::vector<Tensor>& tensors) override;
  /// A copy per rank from the first device (Note [Peer copies] in CudaBackend.h).
  void scatter(const Tensor& source, const std::vector<Tensor>& parts) override;
  std::string name() const override { return "peer copies"; }

 private:
  std::vector<Device> devices_;
  // On the first device: the rank being added, kept between calls so that a steady
  // training step allocates nothing.
  Tensor incoming_;
};

}  // namespace nn
