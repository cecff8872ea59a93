// nn::NarrowingModule: what Narrow and Select share. The output is a copy of indices
// [offset, offset + length) of the input along one dimension (Select drops that dimension),
// and gradInput is zero but there, where it holds gradOutput. The copies go through copyAlong,
// on any device, so a steady step allocates nothing. A subclass says only which indices an
// input gives.
#pragma once

#include <vector>

#include "nn/core/Module.h"

namespace nn {

/// The base of Narrow and Select: a copy of a range of indices along one dimension.
class NarrowingModule : public Module {
 public:
  const Tensor& updateOutput(const Tensor& input) final;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) final;
  void clearState() override;

 protected:
  /// Indices [offset, offset + length) along `dim`, within the input's sizes.
  struct Slice {
    /// The dimension, from 0.
    int dim = 0;
    /// The first index, from 0 (resolved: not negative).
    int64_t offset = 0;
    /// The number of indices, at least 1.
    int64_t length = 0;
    /// Whether the output keeps `dim` (Narrow) or drops it (Select).
    bool keepsDim = true;
  };
  /// The slice of `input`, negative offsets and lengths resolved; throws, naming the module,
  /// the input and the indices, where the input cannot give it.
  virtual Slice sliceOf(const Tensor& input) const = 0;

  /// For sliceOf: an nn::Error unless `input` has `dim` and [offset, offset + length) lies
  /// within its size there, with at least one index.
  void checkSlice(const Tensor& input, const Slice& slice) const;

 private:
  // Sets sizes_ (the output's) and kept_ (the same with the dimension kept) for `input`.
  void resolveSizes(const Tensor& input, const Slice& slice);

  std::vector<int64_t> sizes_;
  std::vector<int64_t> kept_;
  Tensor contiguousInput_;
  Tensor contiguousGradOutput_;
  // The output and gradOutput seen with the sliced dimension kept, for copyAlong.
  Tensor outputKept_;
  Tensor gradOutputKept_;
};

}  // namespace nn
