// nn::Select: index `index` of the input along dimension `dim`, copied, without that
// dimension; Torch7's nn.Select(dimension, index), with dimensions and indices from 0. A
// negative index counts from the end (-1 is the last), as in Torch7.
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/NarrowingModule.h"

namespace nn {

struct SelectOptions {
  int dim = 0;
  int64_t index = 0;

  template <typename F>
  void visit(F&& field) {
    field("dim", dim);
    field("index", index);
  }
};

class Select : public WithOptions<SelectOptions, NarrowingModule> {
 public:
  Select(int dim, int64_t index) : Select(Options{dim, index}) {}
  explicit Select(const Options& options);

  std::string typeName() const override { return "nn.Select"; }

 protected:
  Slice sliceOf(const Tensor& input) const override;
};

}  // namespace nn
