// nn::BatchIterator: mini-batches of a data set held in two CPU tensors, in a seeded
// shuffled order, filled into reused tensors so that a training loop allocates nothing.
//
// The order of epoch e is a Fisher-Yates shuffle drawn from a Generator seeded with
// (seed, e) alone, not from one generator running across epochs: the whole data order is
// then (seed, epoch, position), so a checkpoint that stores epoch(), position() and
// permutation() and calls restore() continues exactly as an uninterrupted run would.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/Random.h"
#include "nn/Tensor.h"

namespace nn {

/// How a BatchIterator orders and cuts the data.
struct BatchOptions {
  /// A new random order each epoch; false keeps the data set's order.
  bool shuffle = true;
  /// Drop the last batch of an epoch when it has fewer than batchSize samples.
  bool dropLast = false;
  /// With the epoch, decides the order; the same seed gives the same batches.
  uint64_t seed = 0;
};

class BatchIterator {
 public:
  /// Batches of `batchSize` samples: rows of inputs [N, ...] and of targets [N] or [N, ...],
  /// two CPU tensors with the same N.
  BatchIterator(const Tensor& inputs, const Tensor& targets, int64_t batchSize, BatchOptions options = {});

  /// Fills `input` [b, ...] and `target` [b, ...] with the next batch of this epoch, on the
  /// data's device, reusing their storage when it is large enough; returns true. At the end
  /// of the epoch fills nothing, moves on to the next epoch and returns false, so
  /// `while (it.next(x, y))` is one epoch.
  bool next(Tensor& input, Tensor& target);
  /// next() into the member tensors input and target.
  bool next() { return next(input, target); }

  /// Number of samples N.
  int64_t size() const { return static_cast<int64_t>(permutation_.size()); }
  int64_t batchSize() const { return batchSize_; }
  /// Batches next() gives in one epoch.
  int64_t batchesPerEpoch() const;
  /// The current epoch, counted from 0.
  int64_t epoch() const { return epoch_; }
  /// Samples of this epoch already given out.
  int64_t position() const { return position_; }
  /// This epoch's order: batch k holds samples permutation[k * batchSize ...].
  const std::vector<int64_t>& permutation() const { return permutation_; }
  /// Goes back to a saved point: the data order then continues as it did after it.
  /// Checks that `permutation` orders 0 .. N-1 and that position is within it.
  void restore(int64_t epoch, int64_t position, const std::vector<int64_t>& permutation);

  /// The batch of next() without arguments.
  Tensor input;
  /// The targets of that batch.
  Tensor target;

 private:
  void startEpoch(int64_t epoch);

  Tensor inputs_;
  Tensor targets_;
  int64_t batchSize_;
  BatchOptions options_;
  int64_t epoch_ = 0;
  int64_t position_ = 0;
  std::vector<int64_t> permutation_;
  Generator generator_;
  // Sizes of a batch; element 0 is rewritten for each batch.
  std::vector<int64_t> inputSizes_;
  std::vector<int64_t> targetSizes_;
};

}  // namespace nn
