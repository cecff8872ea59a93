// nn::Dataset: samples of (input, target) that a BatchIterator cuts into batches, as torch's
// map-style Dataset. A data set of one's own overrides four functions; nn::TensorDataset holds
// the samples in two tensors (Fashion-MNIST's images and labels, say).
//
//   class Squares : public nn::Dataset {                     // input {x}, target {x * x}
//    public:
//     int64_t size() const override { return 1000; }
//     std::vector<int64_t> inputSizes() const override { return {1}; }
//     std::vector<int64_t> targetSizes() const override { return {1}; }
//     void get(int64_t i, float* input, float* target) const override {
//       input[0] = i / 1000.f;
//       target[0] = input[0] * input[0];
//     }
//   };
#pragma once

#include <cstdint>
#include <vector>

#include "nn/tensor/Tensor.h"

namespace nn {

/// A map-style data set (torch.utils.data.Dataset): size() samples of fixed-size float input and target.
class Dataset {
 public:
  virtual ~Dataset() = default;

  /// The number of samples, N > 0.
  virtual int64_t size() const = 0;
  /// The sizes of one sample's input ({1, 28, 28} for an image) and target ({} for a class
  /// index): a batch of b samples is [b, inputSizes...] and [b, targetSizes...].
  virtual std::vector<int64_t> inputSizes() const = 0;
  /// The sizes of one sample's target ({} for a class index, {k} for k values), as inputSizes().
  virtual std::vector<int64_t> targetSizes() const = 0;
  /// Writes sample `index` (0 <= index < size()): product(inputSizes()) floats at `input` and
  /// product(targetSizes()) at `target`, row-major. A BatchIterator calls it from one thread at
  /// a time, its background thread where it has one, unless concurrentGet(); an exception
  /// reaches the caller of next().
  virtual void get(int64_t index, float* input, float* target) const = 0;
  /// Whether get() may run on several threads at once, each for other samples. A BatchIterator
  /// that makes its batches on the caller's thread then gathers a batch in parts on the compute
  /// threads of its device (nn::setNumThreads, or a table's threads that nn::LendDeviceThreads
  /// lends). False unless a data set says so.
  virtual bool concurrentGet() const { return false; }
};

/// The samples of two CPU tensors: inputs [N, ...] and targets [N] or [N, ...], row i of each
/// being sample i. Keeps contiguous copies of views that are not.
class TensorDataset : public Dataset {
 public:
  /// inputs [N, ...] and targets [N, ...], N > 0, on one CPU device; shared where contiguous, else copied.
  TensorDataset(const Tensor& inputs, const Tensor& targets);

  int64_t size() const override { return inputs_.size(0); }
  std::vector<int64_t> inputSizes() const override;
  std::vector<int64_t> targetSizes() const override;
  void get(int64_t index, float* input, float* target) const override;
  /// True: get() copies rows of tensors it only reads.
  bool concurrentGet() const override { return true; }

 private:
  Tensor inputs_;
  Tensor targets_;
  int64_t inputRow_;
  int64_t targetRow_;
};

}  // namespace nn
