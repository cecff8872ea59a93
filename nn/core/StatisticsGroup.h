// nn::StatisticsGroup: sums a few numbers over every part of one data-parallel step, on the
// thread that runs a part, so that a module can compute statistics of the whole batch where each
// device or process holds a slice of it: synchronised batch normalisation (PyTorch's
// SyncBatchNorm; BatchNormalizationOptions::sync) sums its per-feature sums through it.
// DataParallelTable installs one on each device thread for the replica's passes, and
// DistributedDataParallelTable one on its own thread for the child's passes; a table inside a
// process of several sums over its replicas, then over the processes. Outside both, a thread has
// none, and the module computes over its own batch.
#pragma once

#include <cstddef>

namespace nn {

/// The parts of one data-parallel step, summing together (see the top of this file).
class StatisticsGroup {
 public:
  virtual ~StatisticsGroup() = default;
  /// Sums values[0 .. n) over every part, in place: every part ends with the same sums, added
  /// in the same order on each. Every part makes the same calls in the same order, each with
  /// the same n; a part that fails ends the others' waits with an nn::Error.
  virtual void allReduceSum(double* values, size_t n) = 0;
  /// The same for sums of gradients, which each part may hold at a scale of its own: a
  /// DistributedDataParallelTable's rank computes its loss's average over its own batch and
  /// weighs the ranks' gradients by their batch sizes afterwards. The totals are at this part's
  /// scale: the sum of every part's values, each times its batch over this part's. A plain sum
  /// where the parts share one scale (a DataParallelTable's replicas, under one criterion).
  virtual void allReduceGradientSum(double* values, size_t n) { allReduceSum(values, n); }
};

/// Makes `group` (null for none) the calling thread's group while this object lives (the one
/// before it afterwards).
class ScopedStatisticsGroup {
 public:
  explicit ScopedStatisticsGroup(StatisticsGroup* group);
  ~ScopedStatisticsGroup();
  ScopedStatisticsGroup(const ScopedStatisticsGroup&) = delete;
  ScopedStatisticsGroup& operator=(const ScopedStatisticsGroup&) = delete;

 private:
  StatisticsGroup* previous_;
};

/// The calling thread's group; null outside a data-parallel table's passes.
StatisticsGroup* currentStatisticsGroup();

}  // namespace nn
