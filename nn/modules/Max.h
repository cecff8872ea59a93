// nn::Max: the largest element of the input along one dimension (Torch7's Max(dimension,
// nInputDims), dimensions from 0 here, the dimension dropped unless the input has one
// dimension), the first of equal maxima, NaN where the line holds one (PyTorch's max). gradInput
// is gradOutput at each chosen element and 0 elsewhere. See nn::ReducedDimension for the
// dimension's rules.
#pragma once

#include "nn/core/Options.h"
#include "nn/modules/ReducedDimension.h"

namespace nn {

/// The arguments of Max.
struct MaxOptions {
  /// The dimension reduced, from 0 (Torch7's dimension counts from 1); a negative one counts from the end
  /// (-1 is the last). Checked against each input.
  int dim = 0;
  /// Where at least 0, the number of dimensions of one sample: an input with more is a batch, and a dim of at
  /// least 0 counts from its second dimension. Default -1: no batch dimension is assumed.
  int nInputDims = -1;

  template <typename F>
  void visit(F&& field) {
    field("dim", dim);
    field("nInputDims", nInputDims);
  }
};

/// Torch7's nn.Max: the largest element along one dimension.
class Max : public WithOptions<MaxOptions> {
 public:
  /// The maximum along `dim`, with `nInputDims` as MaxOptions describes them.
  explicit Max(int dim, int nInputDims = -1) : Max(Options{dim, nInputDims}) {}
  /// The module of `options`.
  explicit Max(const Options& options) : WithOptions(options) {}

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void clearState() override;

  std::string typeName() const override { return "nn.Max"; }

  /// The position along the dimension of each chosen element, from 0, as floats (the output's
  /// sizes), of the last forward.
  Tensor indices;

 private:
  ReducedDimension reduced_;
  Tensor contiguousInput_;
  Tensor contiguousGradOutput_;
};

}  // namespace nn
