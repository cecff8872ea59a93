// nn::ProcessGroup: the processes of one data-parallel training, on MPI (Open MPI). Each
// process is a rank; collectives take every rank, in the same order on every rank, as MPI's
// and NCCL's do. Tensors may lie on any device: those on a CUDA device go through NCCL, whose
// communicator the group sets up over MPI on first use.
//
//   auto group = nn::ProcessGroup::world();   // MPI_COMM_WORLD; MPI starts on first use
//   group->allReduceSum(gradients);           // every rank ends with the sum
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "nn/distributed/Launch.h"
#include "nn/tensor/Error.h"
#include "nn/tensor/Tensor.h"

namespace nn {

/// The processes of a distributed training and the collectives among them (over MPI, and NCCL for CUDA
/// tensors); see the file comment. ProcessGroup::world() or mpiProcessGroup() makes one.
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
  void allReduceSum(Tensor& t) {
    startAllReduceSum(t);
    wait();
  }
  /// Starts allReduceSum(t) and returns at once: `t` holds the sum once wait() has returned, and
  /// must not be touched before. Collectives complete in the order they were started, which
  /// must be the same on every rank. On a CUDA device the sum is queued on the device's stream
  /// (NCCL): work queued there after wait() sees it, and the host does not wait for it.
  virtual void startAllReduceSum(Tensor& t) = 0;
  /// startAllReduceSum(t) with the floats sent between the ranks as bfloat16, half the bytes
  /// (PyTorch DDP's bf16_compress_hook): each rank adds what it receives in float32, and every
  /// rank ends with the same sum, rounded to bfloat16. CPU tensors; a CUDA tensor's sum, and
  /// this base's for any tensor, is startAllReduceSum's, in float32.
  virtual void startAllReduceSumBfloat16(Tensor& t) { startAllReduceSum(t); }
  /// Lets the started collectives move on, without waiting (MPI moves data only inside its own
  /// calls): call it now and then while there is other work to do.
  virtual void progress() = 0;
  /// Returns once every started collective has completed (for a CUDA tensor: is queued), with
  /// the deadline of allReduceSum.
  virtual void wait() = 0;
  /// Copies rank `root`'s `t` (contiguous, same sizes on every rank) into every rank's.
  virtual void broadcast(Tensor& t, int root) = 0;
  /// Every rank's `text`, in rank order.
  virtual std::vector<std::string> allGather(const std::string& text) = 0;
  /// Returns once every rank has called it.
  virtual void barrier() = 0;

  /// Says `message` on stderr and ends every rank of the job at once with exit status `status`
  /// (MPI_Abort): for an error that one rank meets alone (a file only rank 0 writes), which
  /// would leave the others waiting in their next collective until its deadline. This base's
  /// version, for a group of this process alone, says it and exits.
  [[noreturn]] virtual void abort(const std::string& message, int status) {
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
    std::exit(status);
  }

  /// How long a collective waits for the other ranks before the job is ended: 600 s, or the
  /// environment's NN_PROCESS_GROUP_TIMEOUT where it is set (an nn::Error at the group's
  /// construction where it is not a positive number).
  double timeoutSeconds() const { return timeoutSeconds_; }
  /// Sets timeoutSeconds(); an nn::Error unless `seconds` is positive and finite.
  void setTimeoutSeconds(double seconds) {
    NN_CHECK(std::isfinite(seconds) && seconds > 0,
             "nn.ProcessGroup: expected a positive, finite timeout in seconds, got " << seconds);
    timeoutSeconds_ = seconds;
  }

  /// All processes of the job (MPI_COMM_WORLD), MPI initialised on first use if the program
  /// has not done it, and finalised at exit. An nn::Error in a build without MPI.
  static std::shared_ptr<ProcessGroup> world();

 private:
  double timeoutSeconds_ = timeoutFromEnvironment().value_or(600);
};

}  // namespace nn
