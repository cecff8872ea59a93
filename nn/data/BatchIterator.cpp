// nn::BatchIterator: per-epoch Fisher-Yates permutations, samples gathered from the data set,
// and the background thread's two slots.
#include "nn/data/BatchIterator.h"

#include <algorithm>
#include <numeric>

#include "nn/runtime/ComputeThreads.h"
#include "nn/tensor/Checked.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

// SplitMix64's finaliser: nearby (seed, epoch) pairs give unrelated generator seeds.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::shared_ptr<const Dataset> checkedDataset(std::shared_ptr<const Dataset> dataset) {
  NN_CHECK(dataset != nullptr, "nn.BatchIterator: expected a data set, got none");
  NN_CHECK(dataset->size() > 0,
           "nn.BatchIterator: expected a data set of at least one sample, got " << dataset->size());
  return dataset;
}

// A batch is gathered in parts of at least this many samples (concurrentGet): a smaller part
// costs less than handing it to a thread.
constexpr int64_t kSamplesPerPart = 16;

}  // namespace

BatchIterator::BatchIterator(const Tensor& inputs, const Tensor& targets, int64_t batchSize, BatchOptions options)
    : BatchIterator(std::make_shared<TensorDataset>(inputs, targets), batchSize, std::move(options)) {
  device_ = inputs.device();
}

BatchIterator::BatchIterator(std::shared_ptr<const Dataset> dataset, int64_t batchSize, BatchOptions options)
    : dataset_(checkedDataset(std::move(dataset))), batchSize_(batchSize), options_(std::move(options)) {
  NN_CHECK(batchSize > 0, "nn.BatchIterator: expected a positive batch size, got " << batchSize);
  NN_CHECK(options_.shards > 0 && options_.shard >= 0 && options_.shard < options_.shards,
           "nn.BatchIterator: expected shard 0 .. shards - 1 of shards > 0, got shard " << options_.shard << " of "
                                                                                        << options_.shards);
  int64_t global = 0;
  NN_CHECK(mulInto(batchSize, options_.shards, global) && global <= kMaxElements,
           "nn.BatchIterator: a batch size of " << batchSize << " in each of " << options_.shards
                                                << " shards is beyond a tensor's size");
  NN_CHECK(!options_.dropLast || globalBatchSize() <= dataset_->size(),
           "nn.BatchIterator: a data set of " << dataset_->size() << " samples has no full batch of "
                                              << globalBatchSize() << " (batch size " << batchSize << " x "
                                              << options_.shards
                                              << " shards): dropping the last partial batch would leave none");
  NN_CHECK(options_.shards <= dataset_->size(), "nn.BatchIterator: " << options_.shards << " shards of "
                                                                     << dataset_->size() << " samples leave none "
                                                                     << "for some");
  inputSizes_ = dataset_->inputSizes();
  targetSizes_ = dataset_->targetSizes();
  inputRow_ = product(inputSizes_);
  targetRow_ = product(targetSizes_);
  inputSizes_.insert(inputSizes_.begin(), 0);
  targetSizes_.insert(targetSizes_.begin(), 0);
  given_.permutation.resize(static_cast<size_t>(dataset_->size()));
  startEpoch(given_, 0);
  // The tensor constructor sets the device after this one returns: the thread starts at the
  // first next().
}

BatchIterator::~BatchIterator() { stopThread(); }

int64_t BatchIterator::batchesPerEpoch() const {
  const int64_t full = size() / globalBatchSize(), rest = size() % globalBatchSize();
  return full + (!options_.dropLast && rest >= options_.shards ? 1 : 0);
}

void BatchIterator::startEpoch(Cursor& cursor, int64_t epoch) const {
  cursor.epoch = epoch;
  cursor.position = 0;
  std::iota(cursor.permutation.begin(), cursor.permutation.end(), int64_t{0});
  if (!options_.shuffle) return;
  Generator generator(mix(options_.seed ^ mix(static_cast<uint64_t>(epoch))));
  for (size_t i = cursor.permutation.size() - 1; i > 0; --i)
    std::swap(cursor.permutation[i], cursor.permutation[generator.below(i + 1)]);
}

int64_t BatchIterator::prepare(Cursor& cursor, Tensor& batchInput, Tensor& batchTarget) {
  const int64_t remaining = size() - cursor.position;
  if (remaining == 0 || remaining < options_.shards || (options_.dropLast && remaining < globalBatchSize())) {
    NN_CHECK(cursor.epoch < kMaxEpoch,
             "nn.BatchIterator: epoch " << cursor.epoch << " is the last it counts; there is no next");
    startEpoch(cursor, cursor.epoch + 1);
    return 0;
  }
  // This shard's part of the global batch [position, position + global): an even share, the
  // first `extra` shards one sample more.
  const int64_t global = std::min(globalBatchSize(), remaining);
  const int64_t share = global / options_.shards, extra = global % options_.shards;
  const int64_t first = cursor.position + options_.shard * share + std::min<int64_t>(options_.shard, extra);
  const int64_t count = share + (options_.shard < extra ? 1 : 0);
  inputSizes_[0] = count;
  targetSizes_[0] = count;
  batchInput.resize_(inputSizes_, device_);
  batchTarget.resize_(targetSizes_, device_);
  float* x = batchInput.data();
  float* y = batchTarget.data();
  const auto gather = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      dataset_->get(cursor.permutation[static_cast<size_t>(first + i)], x + i * inputRow_, y + i * targetRow_);
  };
  // In parts on the caller's compute threads where the data set allows it; not on the background
  // thread, whose parts would take those threads from the caller's kernels. The first failing
  // sample's error is thrown either way: the parts are runs of samples, rethrown in part order.
  if (dataset_->concurrentGet() && !options_.background)
    parallelRanges(device_, count, kSamplesPerPart, gather);
  else
    gather(0, count);
  if (options_.transform)
    options_.transform(batchInput, batchTarget, cursor.epoch, cursor.position / globalBatchSize());
  cursor.position += global;
  return global;
}

bool BatchIterator::next(Tensor& batchInput, Tensor& batchTarget) {
  if (!options_.background) return prepare(given_, batchInput, batchTarget) > 0;
  if (!thread_.joinable()) startThread();
  Slot& slot = slots_[head_];
  {
    std::unique_lock<std::mutex> lock(mutex_);
    filled_.wait(lock, [&] { return slot.full; });
  }
  // The slot stays full after an error: the thread has stopped, and every call throws it.
  if (slot.error) std::rethrow_exception(slot.error);
  if (slot.count > 0) {
    batchInput.resize_(slot.input.sizes(), device_).copy_(slot.input);
    batchTarget.resize_(slot.target.sizes(), device_).copy_(slot.target);
    given_.position += slot.count;  // the global batch's samples
  } else {
    startEpoch(given_, given_.epoch + 1);  // below kMaxEpoch: the thread's prepare() checked it
  }
  const bool gave = slot.count > 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    slot.full = false;
    head_ = (head_ + 1) % 2;
  }
  emptied_.notify_one();
  return gave;
}

void BatchIterator::run() {
  for (;;) {
    Slot& slot = slots_[tail_];
    {
      std::unique_lock<std::mutex> lock(mutex_);
      emptied_.wait(lock, [&] { return stop_ || !slot.full; });
      if (stop_) return;
    }
    try {
      slot.count = prepare(ahead_, slot.input, slot.target);
    } catch (...) {
      slot.error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      slot.full = true;
      tail_ = (tail_ + 1) % 2;
    }
    filled_.notify_one();
    if (slot.error) return;
  }
}

void BatchIterator::startThread() {
  ahead_ = given_;
  for (Slot& slot : slots_) {
    slot.full = false;
    slot.error = nullptr;
  }
  head_ = tail_ = 0;
  stop_ = false;
  thread_ = std::thread([this] { run(); });
}

void BatchIterator::stopThread() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  emptied_.notify_all();
  thread_.join();
}

void BatchIterator::checkRestore(int64_t epoch, int64_t position, const std::vector<int64_t>& permutation) const {
  NN_CHECK(epoch >= 0 && epoch <= kMaxEpoch && position >= 0 && position <= size(),
           "nn.BatchIterator.restore: expected epoch from 0 to " << kMaxEpoch << " and position from 0 to " << size()
                                                                 << ", got epoch " << epoch << ", position "
                                                                 << position);
  NN_CHECK(static_cast<int64_t>(permutation.size()) == size(),
           "nn.BatchIterator.restore: expected a permutation of " << size() << " samples, got " << permutation.size());
  std::vector<bool> seen(permutation.size(), false);
  for (int64_t s : permutation) {
    NN_CHECK(s >= 0 && s < size() && !seen[static_cast<size_t>(s)],
             "nn.BatchIterator.restore: not a permutation of 0 .. "
                 << size() - 1 << ": sample " << s << (s >= 0 && s < size() ? " repeats" : " out of range"));
    seen[static_cast<size_t>(s)] = true;
  }
}

void BatchIterator::restore(int64_t epoch, int64_t position, const std::vector<int64_t>& permutation) {
  checkRestore(epoch, position, permutation);
  // The thread restarts from the restored point at the next next().
  stopThread();
  given_.epoch = epoch;
  given_.position = position;
  given_.permutation = permutation;
}

}  // namespace nn
