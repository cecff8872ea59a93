// Communicator: the collectives DataParallelTable needs, over one tensor per participating
// device. The shape is a process group's (as torch's ProcessGroup: a call takes this
// process's tensors, one per local device), so a multi-process implementation over MPI and
// NCCL fits behind it later: with one device per process, each process passes one tensor.
//
// Rank 0 (the first tensor of the first process) is the root: reduce sums onto it and
// broadcast copies from it. Every tensor of one call has the same sizes and is contiguous.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/Tensor.h"

namespace nn {

class Communicator {
 public:
  virtual ~Communicator() = default;
  /// tensors[0] = sum over all ranks; the other tensors are left as they were.
  virtual void reduce(const std::vector<Tensor>& tensors) = 0;
  /// Every tensor = tensors[0] of rank 0.
  virtual void broadcast(const std::vector<Tensor>& tensors) = 0;
  /// Every tensor = sum over all ranks.
  virtual void allReduce(const std::vector<Tensor>& tensors) = 0;
  /// "host copies", "nccl", "peer copies"
  virtual std::string name() const = 0;
};

class DeviceThreads;

/// The communicator for `devices`: NCCL if asked for and usable, else copies. When NCCL is
/// asked for but cannot run on these devices, says so once on stderr and uses copies.
/// `threads`, if given, are the devices' threads: host copies spread their work over them.
std::unique_ptr<Communicator> makeCommunicator(const std::vector<Device>& devices, bool useNCCL,
                                               DeviceThreads* threads = nullptr);

}  // namespace nn
