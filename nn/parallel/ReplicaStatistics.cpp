// nn::ReplicaStatistics: the replicas' sums, met at a condition variable.
#include "nn/parallel/ReplicaStatistics.h"

#include <algorithm>

#include "nn/tensor/Error.h"

namespace nn {

ReplicaStatistics::ReplicaStatistics(size_t replicas) {
  members_.reserve(replicas);
  for (size_t i = 0; i < replicas; ++i) members_.emplace_back(this, i);
  for (auto& slots : slots_) slots.resize(replicas);
}

void ReplicaStatistics::begin(size_t parts, StatisticsGroup* outer) {
  std::lock_guard<std::mutex> lock(mutex_);
  parts_ = parts;
  outer_ = outer;
  arrived_ = 0;
  error_.clear();
}

void ReplicaStatistics::abort(size_t failed, const std::string& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!error_.empty()) return;
  error_ = "replica " + std::to_string(failed) + " failed before the batch statistics were summed: " + error;
  done_.notify_all();
}

void ReplicaStatistics::allReduceSum(size_t index, double* values, size_t n, bool gradients) {
  std::unique_lock<std::mutex> lock(mutex_);
  NN_CHECK(error_.empty(), "nn.DataParallelTable: " << error_);
  NN_CHECK(index < parts_, "nn.DataParallelTable: replica " << index << " sums batch statistics in a round of "
                                                            << parts_ << " replicas");
  const uint64_t call = calls_;
  const size_t parity = call % 2;
  slots_[parity][index].assign(values, values + n);
  if (++arrived_ == parts_) {
    std::vector<double>& total = totals_[parity];
    total.assign(n, 0.0);
    for (size_t r = 0; r < parts_; ++r) {
      const std::vector<double>& slot = slots_[parity][r];
      if (slot.size() != n) {
        error_ = "replicas " + std::to_string(r) + " and " + std::to_string(index) + " sum " +
                 std::to_string(slot.size()) + " and " + std::to_string(n) +
                 " batch statistics at the same call: their modules differ";
        done_.notify_all();
        throw Error("nn.DataParallelTable: " + error_);
      }
      for (size_t k = 0; k < n; ++k) total[k] += slot[k];
    }
    if (outer_ != nullptr) {
      // Every other replica waits for this call: none touches the slots or the total meanwhile.
      lock.unlock();
      try {
        if (gradients)
          outer_->allReduceGradientSum(total.data(), n);
        else
          outer_->allReduceSum(total.data(), n);
      } catch (const std::exception& e) {
        lock.lock();
        error_ = std::string("summing the batch statistics over the processes failed: ") + e.what();
        done_.notify_all();
        throw;
      }
      lock.lock();
    }
    arrived_ = 0;
    ++calls_;
    done_.notify_all();
  } else {
    done_.wait(lock, [&] { return calls_ != call || !error_.empty(); });
    NN_CHECK(calls_ != call, "nn.DataParallelTable: " << error_);
  }
  std::copy(totals_[parity].begin(), totals_[parity].end(), values);
}

}  // namespace nn
