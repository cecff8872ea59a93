// nn::Narrow: indices [offset, offset + length) of the input along dimension `dim`, copied;
// Torch7's nn.Narrow(dimension, offset, length), with dimensions and offsets from 0. A negative
// offset counts from the end (-1 is the last index), and a negative length ends that many
// indices before the end plus one (-1 reaches the last index), as in Torch7.
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/NarrowingModule.h"

namespace nn {

struct NarrowOptions {
  int dim = 0;
  int64_t offset = 0;
  int64_t length = 1;

  template <typename F>
  void visit(F&& field) {
    field("dim", dim);
    field("offset", offset);
    field("length", length);
  }
};

class Narrow : public WithOptions<NarrowOptions, NarrowingModule> {
 public:
  Narrow(int dim, int64_t offset, int64_t length = 1) : Narrow(Options{dim, offset, length}) {}
  explicit Narrow(const Options& options);

  std::string typeName() const override { return "nn.Narrow"; }

 protected:
  Slice sliceOf(const Tensor& input) const override;
};

}  // namespace nn
