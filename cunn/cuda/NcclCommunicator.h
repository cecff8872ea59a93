// NcclCommunicator: the collectives of DataParallelTable over CUDA devices with NCCL, one
// NCCL communicator per device of the set, all driven from the calling thread in one group.
#pragma once

#include <vector>

#include "nn/backend/Communicator.h"

struct ncclComm;  // nccl.h's ncclComm_t is a pointer to it; the header stays out of here

namespace nn {

class NcclCommunicator : public Communicator {
 public:
  /// Rank i is devices[i]: distinct CUDA devices. Throws an nn::Error when NCCL cannot set
  /// up a communicator over them.
  explicit NcclCommunicator(std::vector<Device> devices);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  /// Each call takes tensors[i] on devices[i] and queues the collective on the devices'
  /// streams: later work on those devices, and copies to the host, see its result (Note [One
  /// stream per device] in CudaBackend.h); the host does not wait.
  void reduce(const std::vector<Tensor>& tensors) override;
  void broadcast(const std::vector<Tensor>& tensors) override;
  void allReduce(const std::vector<Tensor>& tensors) override;
  std::string name() const override { return "nccl"; }

 private:
  enum class Collective { Reduce, Broadcast, AllReduce };
  void run(Collective collective, const std::vector<Tensor>& tensors, const char* who);

  std::vector<Device> devices_;
  std::vector<ncclComm*> comms_;
};

}  // namespace nn
