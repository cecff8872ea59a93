// NcclCommunicator: the collectives of DataParallelTable over CUDA devices with NCCL (and its
// scatter of a batch on the first device: point-to-point sends), one
// NCCL communicator per device of the set, all driven from the calling thread in one group.
//
// Making NCCL communicators is slow (seconds on real GPUs), so a destroyed NcclCommunicator gives
// its set back to a pool kept per device list, and the next one over the same devices takes it
// instead of making another. A set is held by one NcclCommunicator at a time (NCCL's
// communicators are not for two threads at once); a set that saw an NCCL error is destroyed.
#pragma once

#include <cstdint>
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
  /// The root sends each rank its part (ncclSend and ncclRecv in one group) and copies its own
  /// on its stream: every device waits for its own queue alone, where copies between devices
  /// join both devices' queues (Note [Peer copies] in CudaBackend.h).
  void scatter(const Tensor& source, const std::vector<Tensor>& parts) override;
  std::string name() const override { return "nccl"; }

  /// How many sets of NCCL communicators this process has made (ncclCommInitAll calls that
  /// succeeded), for tests of the pool.
  static int64_t setsMade();

 private:
  enum class Collective { Reduce, Broadcast, AllReduce };
  void run(Collective collective, const std::vector<Tensor>& tensors, const char* who);

  std::vector<Device> devices_;
  std::vector<ncclComm*> comms_;
  // Set by a failed NCCL call: the set goes to no pool.
  bool broken_ = false;
};

}  // namespace nn
