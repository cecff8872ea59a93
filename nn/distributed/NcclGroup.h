// nn::NcclGroup: the collectives of a ProcessGroup on tensors of one CUDA device, over NCCL, one
// rank per process (as PyTorch's and Horovod's): rank 0 makes NCCL's unique id, the process
// group's MPI hands it to every rank, and every rank joins the communicator with its device. No
// NCCL call, nor a wait for what it queued, outlasts the group's timeout (NcclGroup.cpp). In a
// build without CUDA there are no CUDA tensors, and makeNcclGroup says so.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "nn/tensor/Device.h"
#include "nn/tensor/FunctionRef.h"
#include "nn/tensor/Tensor.h"

namespace nn {

class NcclGroup {
 public:
  virtual ~NcclGroup() = default;
  /// Queue the collective on the device's stream (Note [One stream per device]): work queued
  /// there later sees the result; the host does not wait. `t` is contiguous, on the device.
  virtual void allReduceSum(Tensor& t) = 0;
  virtual void broadcast(Tensor& t, int root) = 0;
};

/// How long a group's NCCL work may take, and how the job ends past it.
struct NcclDeadline {
  /// The process group's timeout, read at each wait.
  std::function<double()> timeoutSeconds;
  /// Says `message` and ends every rank (MPI_Abort); called after NCCL's communicator is aborted.
  std::function<void(const std::string& message)> endJob;
};

/// A collective of every rank: the communicator of `rank` of `size` on `device`.
/// shareFromRank0(bytes, n) must copy rank 0's n bytes at `bytes` into every rank's.
std::unique_ptr<NcclGroup> makeNcclGroup(Device device, int rank, int size,
                                         FunctionRef<void(void* bytes, size_t n)> shareFromRank0,
                                         NcclDeadline deadline);

}  // namespace nn
