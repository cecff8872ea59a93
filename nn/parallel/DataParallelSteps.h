// The named steps of data-parallel training (Note [Data parallel steps] in
// DataParallelTable.cpp), each a function that a test can call alone: scatter (splitBatch and
// scatterSlice), gather (gatherParts), reduce gradients (reduceGradients) and broadcast
// parameters (broadcastParameters, averageBuffers). DataParallelTable composes them; running
// the replicas, one thread per device, is DeviceThreads.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/backend/Communicator.h"
#include "nn/core/Module.h"
#include "nn/tensor/FunctionRef.h"

namespace nn {

/// One device's rows of a batch: [start, start + length) along the split dimension.
struct Slice {
  /// The first row, counted from 0.
  int64_t start = 0;
  /// The number of rows, at least 1 in a split.
  int64_t length = 0;
};

/// Scatter, the split: `rows` rows over at most `deviceCount` devices, one slice per device that
/// gets rows, in device order; sizes differ by at most one, the remainder going to the first
/// devices (15 rows on 4 devices: 4, 4, 4, 3), and fewer rows than devices use the first `rows`
/// devices, a row each. `slices` keeps its capacity, so a steady step allocates nothing.
void splitBatch(int64_t rows, size_t deviceCount, std::vector<Slice>& slices);

/// Scatter, one device's copy: `into` = rows `slice` of `src` (contiguous, on any device) along
/// `dim`, resized on `device`; returns `into`. Each device's thread copies its own slice, in
/// parallel with the others; once `into` has the memory, it allocates nothing.
const Tensor& scatterSlice(const Tensor& src, int dim, Slice slice, const Device& device, Tensor& into);

/// Scatter of a table: `into` = `src`'s tables with scatterSlice of each of its tensors (each
/// contiguous). A tensor `src` is scatterSlice itself.
const Activity& scatterActivity(const Activity& src, int dim, Slice slice, const Device& device, Activity& into);

/// Whether scatterInOneCall takes `src`: one tensor with elements, on `first` (the first
/// device), cut along dimension 0 (`dim`), so that each slice is a run of its elements. Where
/// not, each device's thread copies its own slice (scatterActivity).
bool scattersInOneCall(const Activity& src, int dim, const Device& first);

/// Scatter of a whole batch in one call of `communicator` (NCCL's sends where it runs, rather
/// than a copy per device that joins the first device's queue with each other's): resizes
/// into[i] to slice i of `src` (one that scattersInOneCall takes) on devices[i], those past the
/// slices to no rows, and has the communicator copy them; `parts` is scratch for the call's list.
void scatterInOneCall(const Tensor& src, const std::vector<Slice>& slices, const std::vector<Device>& devices,
                      Communicator& communicator, std::vector<Activity>& into, std::vector<Tensor>& parts);

/// The number of rows of an input along `dim`: every tensor of a table must have the same
/// (Torch7's DataParallelTable splits each of them); an nn::Error naming the sizes otherwise.
int64_t rowsOf(const Activity& input, int dim);

/// `into` = `a` with every tensor contiguous: shared where it is, a contiguous copy where not.
void contiguousActivity(const Activity& a, Activity& into);

/// Gather: `into` = `parts` concatenated along `dim` in order, resized on devices[0]. parts[i]
/// comes from devices[i], which the error names when its sizes differ from the first part's in
/// a dimension other than `dim`. Once `into` has the memory, it allocates nothing.
void gatherParts(const std::vector<const Tensor*>& parts, int dim, const std::vector<Device>& devices, Tensor& into);

/// Gather of tables: `into` = the parts' tables (all alike) with gatherParts of each of their
/// tensors. It keeps its lists of parts, one per level of nesting, from call to call, so that
/// a steady step allocates nothing.
class ActivityGather {
 public:
  /// Gathers `parts` (parts[i] from devices[i], all tables of one shape, or all tensors) into `into`, on
  /// devices[0]; an nn::Error naming the device whose part differs in shape.
  void operator()(const std::vector<const Activity*>& parts, int dim, const std::vector<Device>& devices,
                  Activity& into);

 private:
  void gatherAt(size_t depth, int dim, const std::vector<Device>& devices, Activity& into);
  std::vector<std::vector<const Activity*>> levels_;
  std::vector<const Tensor*> tensors_;
};

/// The tensors that the collectives take from the replicas of one module: one tensor of each
/// replica per call, in replica order. Its vectors keep their capacity from step to step, so
/// that a steady step allocates nothing.
class ReplicaTensors {
 public:
  /// Flattens each replica's parameters and gradients into one buffer each (getParameters()),
  /// so that a collective over them is one call for as long as the replicas' parameters are
  /// views into those buffers. Without it, or once something flattened a replica again into
  /// buffers of its own (an outer module's getParameters()), collectives go parameter by
  /// parameter.
  void flatten(const std::vector<ModulePtr>& replicas);

  /// What a collective works on.
  enum class Kind { Values, Gradients, Buffers };
  /// Calls collective(group) for each group of `kind`, group[r] being replicas[r]'s tensor: the
  /// flat buffers in one call where every replica still has them, else each parameter (or
  /// buffer) in turn.
  void forEachGroup(const std::vector<ModulePtr>& replicas, Kind kind,
                    FunctionRef<void(const std::vector<Tensor>&)> collective);

 private:
  struct Replica {
    Tensor flatValues, flatGradients;  // from flatten()
    bool flat = false;                 // the parameters are views into them at this call
    std::vector<Tensor> values, gradients, buffers;
  };
  void collect(const std::vector<ModulePtr>& replicas);

  std::vector<Replica> replicas_;
  std::vector<Tensor> group_;
};

/// Reduce gradients: the first replica's gradients += those of every other replica, through
/// `communicator`, which is made for the replicas' devices in order; every replica takes part
/// in every call, as NCCL requires. The other replicas' gradients are left as they were.
void reduceGradients(const std::vector<ModulePtr>& replicas, Communicator& communicator, ReplicaTensors& tensors);

/// What broadcastParameters does with the replicas' buffers (BatchNorm running statistics).
enum class BufferPolicy {
  /// The first replica's are copied to the others with its parameters.
  BroadcastFirst,
  /// Each replica's become the average over the replicas (averageBuffers).
  Average,
};

/// Broadcast parameters: every replica's parameters = the first's, through `communicator`
/// (made for the replicas' devices in order), and its buffers by `buffers`. Gradients and the
/// training mode are left as they were.
void broadcastParameters(const std::vector<ModulePtr>& replicas, Communicator& communicator, ReplicaTensors& tensors,
                         BufferPolicy buffers);

/// Every replica's buffers = their average over the replicas, through `communicator`.
void averageBuffers(const std::vector<ModulePtr>& replicas, Communicator& communicator, ReplicaTensors& tensors);

}  // namespace nn
