// nn::Select: index `index` of the input along dimension `dim`, copied, without that
// dimension; Torch7's nn.Select(dimension, index), with dimensions and indices from 0. A
// negative index counts from the end (-1 is the last), as in Torch7.
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/NarrowingModule.h"

namespace nn {

/// The constructor arguments of nn::Select.
struct SelectOptions {
  /// The dimension to select along, from 0 (Torch7's `dimension`, from 1); at least 0.
  int dim = 0;
  /// The index along `dim`, from 0; negative counts from the end (-1 is the last).
  int64_t index = 0;

  template <typename F>
  void visit(F&& field) {
    field("dim", dim);
    field("index", index);
  }
};

/// Torch7's nn.Select: one index of the input along a dimension, the dimension dropped.
class Select : public WithOptions<SelectOptions, NarrowingModule> {
 public:
  /// Index `index` along dimension `dim`, both from 0: Select(1, 0) is Torch7's nn.Select(2, 1).
  Select(int dim, int64_t index) : Select(Options{dim, index}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit Select(const Options& options);

  std::string typeName() const override { return "nn.Select"; }

 protected:
  Slice sliceOf(const Tensor& input) const override;
};

}  // namespace nn
