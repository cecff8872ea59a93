// nn::Narrow: indices [offset, offset + length) of the input along dimension `dim`, copied;
// Torch7's nn.Narrow(dimension, offset, length), with dimensions and offsets from 0. A negative
// offset counts from the end (-1 is the last index), and a negative length ends that many
// indices before the end plus one (-1 reaches the last index), as in Torch7.
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/NarrowingModule.h"

namespace nn {

/// The arguments of Narrow.
struct NarrowOptions {
  /// The dimension narrowed, from 0 (Torch7's dimension counts from 1); at least 0.
  int dim = 0;
  /// The first index kept, from 0 (Torch7's offset counts from 1); a negative one counts from the end (-1 is the
  /// last index).
  int64_t offset = 0;
  /// The number of indices kept, not 0; a negative one ends that many indices before the end plus one (-1
  /// reaches the last index). Default 1.
  int64_t length = 1;

  template <typename F>
  void visit(F&& field) {
    field("dim", dim);
    field("offset", offset);
    field("length", length);
  }
};

/// Torch7's nn.Narrow: a copy of a range of indices of the input along one dimension.
class Narrow : public WithOptions<NarrowOptions, NarrowingModule> {
 public:
  /// Indices [offset, offset + length) along `dim`, as NarrowOptions describes them.
  Narrow(int dim, int64_t offset, int64_t length = 1) : Narrow(Options{dim, offset, length}) {}
  /// The module of `options`; an nn::Error unless dim is at least 0 and length not 0.
  explicit Narrow(const Options& options);

  std::string typeName() const override { return "nn.Narrow"; }

 protected:
  Slice sliceOf(const Tensor& input) const override;
};

}  // namespace nn
