// nn::BatchIterator: per-epoch Fisher-Yates permutations and row copies.
#include "nn/BatchIterator.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "nn/Error.h"

namespace nn {

namespace {

// SplitMix64's finaliser: nearby (seed, epoch) pairs give unrelated generator seeds.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Elements per sample of a [N, ...] tensor.
int64_t rowSize(const Tensor& t) { return t.size(0) == 0 ? 0 : t.numel() / t.size(0); }

}  // namespace

BatchIterator::BatchIterator(const Tensor& inputs, const Tensor& targets, int64_t batchSize, BatchOptions options)
    : inputs_(inputs.contiguous()), targets_(targets.contiguous()), batchSize_(batchSize), options_(options) {
  NN_CHECK(inputs.dim() >= 1 && targets.dim() >= 1 && inputs.size(0) == targets.size(0) && inputs.size(0) > 0,
           "nn.BatchIterator: expected inputs [N, ...] and targets [N, ...] with the same N > 0, got inputs "
               << inputs.shapeString() << " and targets " << targets.shapeString());
  NN_CHECK(inputs.device().isCpu() && inputs.device() == targets.device(),
           "nn.BatchIterator: expected inputs and targets on one CPU device, got " << inputs.device().str() << " and "
                                                                                   << targets.device().str());
  NN_CHECK(batchSize > 0, "nn.BatchIterator: expected a positive batch size, got " << batchSize);
  NN_CHECK(!options.dropLast || batchSize <= inputs.size(0),
           "nn.BatchIterator: dropping the last partial batch of size " << batchSize << " leaves no batch of "
                                                                        << inputs.size(0) << " samples");
  inputSizes_ = inputs.sizes();
  targetSizes_ = targets.sizes();
  permutation_.resize(static_cast<size_t>(inputs.size(0)));
  startEpoch(0);
}

int64_t BatchIterator::batchesPerEpoch() const {
  return options_.dropLast ? size() / batchSize_ : (size() + batchSize_ - 1) / batchSize_;
}

void BatchIterator::startEpoch(int64_t epoch) {
  epoch_ = epoch;
  position_ = 0;
  std::iota(permutation_.begin(), permutation_.end(), int64_t{0});
  if (!options_.shuffle) return;
  generator_.seed(mix(options_.seed ^ mix(static_cast<uint64_t>(epoch))));
  for (size_t i = permutation_.size() - 1; i > 0; --i)
    std::swap(permutation_[i], permutation_[generator_.below(i + 1)]);
}

bool BatchIterator::next(Tensor& batchInput, Tensor& batchTarget) {
  const int64_t remaining = size() - position_;
  if (remaining == 0 || (options_.dropLast && remaining < batchSize_)) {
    startEpoch(epoch_ + 1);
    return false;
  }
  const int64_t count = std::min(batchSize_, remaining);
  inputSizes_[0] = count;
  targetSizes_[0] = count;
  batchInput.resize_(inputSizes_, inputs_.device());
  batchTarget.resize_(targetSizes_, targets_.device());
  const int64_t inputRow = rowSize(inputs_);
  const int64_t targetRow = rowSize(targets_);
  const float* x = inputs_.data();
  const float* y = targets_.data();
  float* bx = batchInput.data();
  float* by = batchTarget.data();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t sample = permutation_[static_cast<size_t>(position_ + i)];
    std::memcpy(bx + i * inputRow, x + sample * inputRow, static_cast<size_t>(inputRow) * sizeof(float));
    std::memcpy(by + i * targetRow, y + sample * targetRow, static_cast<size_t>(targetRow) * sizeof(float));
  }
  position_ += count;
  return true;
}

void BatchIterator::restore(int64_t epoch, int64_t position, const std::vector<int64_t>& permutation) {
  NN_CHECK(epoch >= 0 && position >= 0 && position <= size(),
           "nn.BatchIterator.restore: expected epoch >= 0 and position from 0 to " << size() << ", got epoch " << epoch
                                                                                   << ", position " << position);
  NN_CHECK(static_cast<int64_t>(permutation.size()) == size(),
           "nn.BatchIterator.restore: expected a permutation of " << size() << " samples, got " << permutation.size());
  std::vector<bool> seen(permutation.size(), false);
  for (int64_t s : permutation) {
    NN_CHECK(s >= 0 && s < size() && !seen[static_cast<size_t>(s)],
             "nn.BatchIterator.restore: not a permutation of 0 .. "
                 << size() - 1 << ": sample " << s << (s >= 0 && s < size() ? " repeats" : " out of range"));
    seen[static_cast<size_t>(s)] = true;
  }
  epoch_ = epoch;
  position_ = position;
  permutation_ = permutation;
}

}  // namespace nn
