// nn::BatchIterator: mini-batches of a Dataset in a seeded shuffled order, filled into reused
// tensors so that a training loop allocates nothing; optionally transformed (augmentation) and
// prepared on a background thread while the current batch trains.
//
// The order of epoch e is a Fisher-Yates shuffle drawn from a Generator seeded with
// (seed, e) alone, not from one generator running across epochs: the whole data order is
// then (seed, epoch, position), so a checkpoint that stores epoch(), position() and
// permutation() and calls restore() continues exactly as an uninterrupted run would. A
// transform is given the epoch and the batch's index in it for the same reason. With or
// without the background thread, next() gives the same batches in the same order.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "nn/data/Dataset.h"
#include "nn/tensor/Random.h"
#include "nn/tensor/Tensor.h"

namespace nn {

/// Changes a batch in place before next() gives it out (a random crop or flip, say): input
/// [b, ...] and target [b, ...] on the host, the epoch (from 0) and the batch's index in it.
/// Runs on the background thread where there is one.
using BatchTransform = std::function<void(Tensor& input, Tensor& target, int64_t epoch, int64_t batch)>;

/// How a BatchIterator orders, cuts and prepares the data: `BatchOptions{shuffle, dropLast,
/// seed}`, then the other fields by name.
struct BatchOptions {
  /// The three fields most set, in order; the others keep their defaults.
  BatchOptions(bool shuffle = true, bool dropLast = false, uint64_t seed = 0)
      : shuffle(shuffle), dropLast(dropLast), seed(seed) {}

  /// A new random order each epoch; false keeps the data set's order.
  bool shuffle = true;
  /// Drop the last batch of an epoch when it has fewer than batchSize samples.
  bool dropLast = false;
  /// With the epoch, decides the order; the same seed gives the same batches.
  uint64_t seed = 0;
  /// Prepare the next batch (the samples and the transform) on a thread of its own while the
  /// caller trains on the current one. The batches are the same either way.
  bool background = false;
  /// Applied to every batch, if set.
  BatchTransform transform;
  /// Training in several processes (nn::DistributedDataParallelTable): the epoch's order is
  /// cut into global batches of batchSize * shards samples, and this process takes part
  /// `shard` (0 .. shards - 1) of each: batchSize samples, or its even share of a smaller last
  /// batch, which is dropped where it has fewer samples than shards. The shards of all
  /// processes, with the same seed, cover each epoch once; position() counts the samples of
  /// all shards, so that a checkpoint resumes on any number of processes.
  int shard = 0;
  /// The number of processes the data is cut among (1: no sharding); at most the data set's size.
  int shards = 1;
};

/// Mini-batches of a Dataset, epoch after epoch, in a reproducible (resumable) order; see the file comment.
///
/// `while (it.next(x, y)) { ... }` is one epoch; the next loop is the next epoch.
class BatchIterator {
 public:
  /// Batches of `batchSize` samples of `dataset`, on the host's cpu:0.
  BatchIterator(std::shared_ptr<const Dataset> dataset, int64_t batchSize, BatchOptions options = {});
  /// Batches of the rows of inputs [N, ...] and of targets [N] or [N, ...], two tensors on one
  /// CPU device with the same N (a TensorDataset), on that device.
  BatchIterator(const Tensor& inputs, const Tensor& targets, int64_t batchSize, BatchOptions options = {});
  /// Stops the background thread.
  ~BatchIterator();
  BatchIterator(const BatchIterator&) = delete;
  BatchIterator& operator=(const BatchIterator&) = delete;

  /// Fills `input` [b, ...] and `target` [b, ...] with the next batch of this epoch, reusing
  /// their storage when it is large enough; returns true. At the end of the epoch fills
  /// nothing, moves on to the next epoch and returns false, so `while (it.next(x, y))` is one
  /// epoch. What the data set's get() or the transform threw is thrown here (again by every
  /// later call, where it was thrown on the background thread).
  bool next(Tensor& input, Tensor& target);
  /// next() into the member tensors input and target.
  bool next() { return next(input, target); }

  /// The data set the batches are cut from.
  const Dataset& dataset() const { return *dataset_; }
  /// The device the batches are on: the host's cpu:0, or the tensors' device.
  const Device& device() const { return device_; }
  /// Number of samples N.
  int64_t size() const { return static_cast<int64_t>(given_.permutation.size()); }
  /// Samples of a batch (of this shard), as given; the last batch of an epoch may have fewer.
  int64_t batchSize() const { return batchSize_; }
  /// Batches next() gives in one epoch.
  int64_t batchesPerEpoch() const;
  /// Samples of one global batch: batchSize() * shards.
  int64_t globalBatchSize() const { return batchSize_ * options_.shards; }
  /// The last epoch an iterator reaches (counted from 0): far beyond any training run, and an
  /// int's range, so that epoch + 1 never overflows. Moving past it is an nn::Error.
  static constexpr int64_t kMaxEpoch = (int64_t{1} << 31) - 1;

  /// The current epoch, counted from 0.
  int64_t epoch() const { return given_.epoch; }
  /// Samples of this epoch already given out by next() (not those prepared ahead), those of
  /// the other shards of the same global batches included.
  int64_t position() const { return given_.position; }
  /// This epoch's order: batch k holds samples permutation[k * batchSize ...].
  const std::vector<int64_t>& permutation() const { return given_.permutation; }
  /// Throws, changing nothing, unless restore() would accept these: epoch from 0 to
  /// kMaxEpoch, `permutation` orders 0 .. N-1 and position lies within it.
  void checkRestore(int64_t epoch, int64_t position, const std::vector<int64_t>& permutation) const;
  /// Goes back to a saved point: the data order then continues as it did after it. Batches
  /// prepared ahead are dropped.
  void restore(int64_t epoch, int64_t position, const std::vector<int64_t>& permutation);

  /// The batch of next() without arguments.
  Tensor input;
  /// The targets of that batch.
  Tensor target;

 private:
  // A place in the data order.
  struct Cursor {
    int64_t epoch = 0;
    int64_t position = 0;
    std::vector<int64_t> permutation;
  };
  // A batch prepared on the background thread, the end of an epoch (count 0), or what
  // preparing it threw.
  struct Slot {
    Tensor input;
    Tensor target;
    int64_t count = 0;
    std::exception_ptr error;
    bool full = false;
  };

  void startEpoch(Cursor& cursor, int64_t epoch) const;
  // Fills input and target with the batch at `cursor` and moves it on; returns the batch's
  // samples, or 0 at the end of the epoch, after moving the cursor to the next one.
  int64_t prepare(Cursor& cursor, Tensor& batchInput, Tensor& batchTarget);
  void run();
  void startThread();
  void stopThread();

  std::shared_ptr<const Dataset> dataset_;
  Device device_;
  int64_t batchSize_;
  BatchOptions options_;
  int64_t inputRow_ = 0;
  int64_t targetRow_ = 0;
  // What next() has given out.
  Cursor given_;
  // What the background thread has prepared.
  Cursor ahead_;
  // Sizes of a batch; element 0 is rewritten for each batch (by the one thread that prepares).
  std::vector<int64_t> inputSizes_;
  std::vector<int64_t> targetSizes_;

  // The background thread fills slots_ in turn; next() empties them in the same turn.
  Slot slots_[2];
  size_t head_ = 0;  // the slot next() takes
  size_t tail_ = 0;  // the slot the thread fills
  bool stop_ = false;
  std::mutex mutex_;
  std::condition_variable filled_;
  std::condition_variable emptied_;
  std::thread thread_;
};

}  // namespace nn
