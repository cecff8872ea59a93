// nn::ProcessGroup: the processes of one data-parallel training, on MPI (Open MPI). Each
// process is a rank; collectives take every rank, in the same order on every rank, as MPI's
// and NCCL's do. Tensors may lie on any device: CUDA tensors go through a host copy.
//
//   auto group = nn::ProcessGroup::world();   // MPI_COMM_WORLD; MPI starts on first use
//   group->allReduceSum(gradients);           // every rank ends with the sum
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/Tensor.h"

namespace nn {

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;

  /// This process's place, 0 .. size() - 1.
  virtual int rank() const = 0;
  /// The number of processes.
  virtual int size() const = 0;

  /// Sums `t` (contiguous) over the group, in place: every rank ends with the same sum. Waits at
  /// most timeoutSeconds() for the other ranks; past it, this rank reports which collective
  /// did not complete and ends the whole job (MPI_Abort), so that no rank hangs.
  virtual void allReduceSum(Tensor& t) = 0;
  /// Copies rank `root`'s `t` (contiguous, same sizes on every rank) into every rank's.
  virtual void broadcast(Tensor& t, int root) = 0;
  /// Every rank's `text`, in rank order.
  virtual std::vector<std::string> allGather(const std::string& text) = 0;
  /// Returns once every rank has called it.
  virtual void barrier() = 0;

  /// How long a collective waits for the other ranks before the job is ended (default 600 s).
  double timeoutSeconds() const { return timeoutSeconds_; }
  void setTimeoutSeconds(double seconds) { timeoutSeconds_ = seconds; }

  /// All processes of the job (MPI_COMM_WORLD), MPI initialised on first use if the program
  /// has not done it, and finalised at exit. An nn::Error in a build without MPI.
  static std::shared_ptr<ProcessGroup> world();

 private:
  double timeoutSeconds_ = 600;
};

}  // namespace nn
