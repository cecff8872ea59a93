// nn::Sum: the sum of the input along one dimension (Torch7's Sum(dimension, nInputDims,
// sizeAverage, squeeze), dimensions from 0 here): the mean where sizeAverage (nn::Mean), the
// dimension dropped where squeeze (the default) unless the input has one dimension. A negative
// dimension counts from the end; with nInputDims >= 0, an input of more dimensions is a batch
// and the dimension counts from its second. gradInput is gradOutput repeated along the
// dimension (over its size where averaged). Sums in double on every device (nn/math/Broadcast.h).
#pragma once

#include <vector>

#include "nn/core/Options.h"
#include "nn/modules/ReducedDimension.h"

namespace nn {

/// The constructor arguments of nn::Sum and nn::Mean, named as Torch7's but for `dim`.
struct SumOptions {
  /// The dimension summed over, from 0 (Torch7's `dimension`, from 1); negative counts from the end.
  int dim = 0;
  /// The dimensions of one sample, or -1 (the default): an input of more has a batch dimension
  /// first, and a non-negative `dim` counts after it.
  int nInputDims = -1;
  /// Divides by the size of the dimension: the mean (nn::Mean). False by default.
  bool sizeAverage = false;
  /// Drops the summed dimension from the output (true, the default) or keeps it with size 1; an input
  /// of one dimension always keeps it.
  bool squeeze = true;

  template <typename F>
  void visit(F&& field) {
    field("dim", dim);
    field("nInputDims", nInputDims);
    field("sizeAverage", sizeAverage);
    field("squeeze", squeeze);
  }
};

/// Torch7's nn.Sum: the sum (or mean) of the input along one dimension.
class Sum : public WithOptions<SumOptions> {
 public:
  /// As Torch7's nn.Sum(dimension, nInputDims, sizeAverage, squeeze) with `dim` from 0.
  explicit Sum(int dim, int nInputDims = -1, bool sizeAverage = false, bool squeeze = true)
      : Sum(Options{dim, nInputDims, sizeAverage, squeeze}) {}
  /// The same from options (what nn::load rebuilds from).
  explicit Sum(const Options& options);

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void clearState() override;

  std::string typeName() const override { return "nn.Sum"; }

 private:
  ReducedDimension reduced_;
  Tensor contiguousInput_;
  Tensor contiguousGradOutput_;
};

/// nn::Mean: Sum with sizeAverage (Torch7's Mean(dimension, nInputDims)).
class Mean : public Sum {
 public:
  /// As Torch7's nn.Mean(dimension, nInputDims) with `dim` from 0; the dimension is dropped.
  explicit Mean(int dim, int nInputDims = -1) : Sum(Options{dim, nInputDims, true, true}) {}
  /// The same from options (what nn::load rebuilds from). A Mean averages whatever the options'
  /// sizeAverage says: SumOptions' default, false, would make nn::Mean(SumOptions{1}) a sum.
  explicit Mean(const Options& options) : Sum(averaged(options)) {}

  std::string typeName() const override { return "nn.Mean"; }

 private:
  static Options averaged(Options options) {
    options.sizeAverage = true;
    return options;
  }
};

}  // namespace nn
