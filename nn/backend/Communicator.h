// Communicator: the collectives of data-parallel training, over one tensor per device. The
// shape is a process group's (as torch's ProcessGroup: a call takes this process's tensors,
// one per local device), so that a multi-process implementation over MPI and NCCL fits behind
// it: with one device per process, each process passes one tensor.
//
// Every backend keeps NCCL's contract, so that what passes on the CPU passes on NCCL: a
// communicator is made for a list of devices, and every call takes exactly one tensor per
// device, in that order, each on its device, all contiguous with one size; every rank takes
// part in every call. Rank 0 (the first device) is the root: reduce sums onto it, broadcast
// copies from it, scatter cuts its tensor into one part per rank (the parts' sizes may differ,
// as a batch's rows over the devices do, and a part may be empty).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/backend/Backend.h"
#include "nn/tensor/Tensor.h"

namespace nn {

/// The collectives over one tensor per device of a fixed list of devices, rank i being devices[i]; made by
/// makeCommunicator from the devices' backend.
class Communicator {
 public:
  virtual ~Communicator() = default;
  /// tensors[0] = the sum over all ranks; the other tensors are left as they were.
  virtual void reduce(const std::vector<Tensor>& tensors) = 0;
  /// Every tensor = tensors[0].
  virtual void broadcast(const std::vector<Tensor>& tensors) = 0;
  /// Every tensor = the sum over all ranks.
  virtual void allReduce(const std::vector<Tensor>& tensors) = 0;
  /// parts[i] = the parts[i].numel() elements of `source` (on the root) that follow those of
  /// parts[0 .. i-1]: a batch cut along its first dimension, one slice per rank.
  virtual void scatter(const Tensor& source, const std::vector<Tensor>& parts) = 0;
  /// "host copies", "nccl", "peer copies"
  virtual std::string name() const = 0;
};

/// The communicator of `devices` (distinct devices of one type, which exist), from their
/// backend: NCCL if asked for and usable, else copies; where NCCL is asked for but cannot run
/// on these devices, the backend says so once on stderr. `parallel`, where given, runs a
/// call's work on the devices' threads (host copies spread their sums over them).
std::unique_ptr<Communicator> makeCommunicator(const std::vector<Device>& devices, bool useNCCL,
                                               Backend::ParallelFor parallel = nullptr);

/// Throws an nn::Error naming `who` (e.g. "HostCommunicator.reduce") unless there is one
/// tensor per device, tensors[i] on devices[i], all contiguous with the sizes of tensors[0].
void checkCollectiveTensors(const std::vector<Tensor>& tensors, const std::vector<Device>& devices, const char* who);

/// Throws an nn::Error naming `who` (e.g. "HostCommunicator.scatter") unless `source` is
/// contiguous on devices[0] and there is one part per device, parts[i] contiguous on devices[i],
/// the parts' sizes adding up to the source's.
void checkScatterTensors(const Tensor& source, const std::vector<Tensor>& parts, const std::vector<Device>& devices,
                         const char* who);

}  // namespace nn
