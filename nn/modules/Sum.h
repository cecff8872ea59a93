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

struct SumOptions {
  int dim = 0;
  int nInputDims = -1;
  bool sizeAverage = false;
  bool squeeze = true;

  template <typename F>
  void visit(F&& field) {
    field("dim", dim);
    field("nInputDims", nInputDims);
    field("sizeAverage", sizeAverage);
    field("squeeze", squeeze);
  }
};

class Sum : public WithOptions<SumOptions> {
 public:
  explicit Sum(int dim, int nInputDims = -1, bool sizeAverage = false, bool squeeze = true)
      : Sum(Options{dim, nInputDims, sizeAverage, squeeze}) {}
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
  explicit Mean(int dim, int nInputDims = -1) : Sum(Options{dim, nInputDims, true, true}) {}
  explicit Mean(const Options& options) : Sum(options) {}

  std::string typeName() const override { return "nn.Mean"; }
};

}  // namespace nn
