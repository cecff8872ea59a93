// nn::ReplicaStatistics: the StatisticsGroup of a DataParallelTable's replicas (nn/core/
// StatisticsGroup.h). The replicas' device threads meet at each call: each leaves its numbers in
// a slot of its own, the last to arrive adds the slots in replica order (the same floats whatever
// the threads' pace), and where the table runs inside a group of its own (a
// DistributedDataParallelTable's ranks) sums that total over it, once, for all of them. The
// replicas share one gradient scale (their slices of one criterion's gradOutput): gradient sums
// add as plain sums here, and as the outer group says over it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "nn/core/StatisticsGroup.h"

namespace nn {

class ReplicaStatistics {
 public:
  /// A group for up to `replicas` replicas.
  explicit ReplicaStatistics(size_t replicas);

  /// Starts a round of the table's (a forward or a backward) in which replicas 0 .. parts - 1
  /// take part, the sums then added over `outer` where not null. No replica may be inside a
  /// call of the last round.
  void begin(size_t parts, StatisticsGroup* outer);
  /// Replica i's group, for its device thread's passes.
  StatisticsGroup* replica(size_t i) { return &members_[i]; }
  /// Replica `failed` met `error`: the calls waiting now, and every later one this round, throw
  /// an nn::Error that says so, instead of waiting for a replica that will not come.
  void abort(size_t failed, const std::string& error);

 private:
  class Member : public StatisticsGroup {
   public:
    Member(ReplicaStatistics* group, size_t index) : group_(group), index_(index) {}
    void allReduceSum(double* values, size_t n) override { group_->allReduceSum(index_, values, n, false); }
    void allReduceGradientSum(double* values, size_t n) override { group_->allReduceSum(index_, values, n, true); }

   private:
    ReplicaStatistics* group_;
    size_t index_;
  };

  // Replica `index`'s call; `gradients` says which of the outer group's sums adds the total.
  void allReduceSum(size_t index, double* values, size_t n, bool gradients);

  std::vector<Member> members_;
  std::mutex mutex_;
  std::condition_variable done_;
  size_t parts_ = 0;
  StatisticsGroup* outer_ = nullptr;
  size_t arrived_ = 0;
  // Calls completed this round; a call's slots and total are those of its parity, so that a
  // replica may leave its numbers for the next call while another still reads this one's total.
  uint64_t calls_ = 0;
  std::vector<std::vector<double>> slots_[2];
  std::vector<double> totals_[2];
  std::string error_;
};

}  // namespace nn
