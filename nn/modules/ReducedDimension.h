// nn::ReducedDimension: the dimension that Sum, Mean and Max reduce, resolved for an input
// (Torch7's rules: negative from the end; with nInputDims >= 0, an input of more dimensions is
// a batch and the dimension counts from its second), the output's sizes (the dimension
// dropped where squeezed, unless the input has one dimension) and the StridedViews that
// BroadcastKernels take: output element j gathers the input elements stridedOffset(base, j) +
// stridedOffset(reduced, r) for r < size; spread maps each input element to its output element.
#pragma once

#include <vector>

#include "nn/backend/TensorKernels.h"
#include "nn/core/Module.h"

namespace nn {

struct ReducedDimension {
  /// Resolves `dim` for `input`; throws, naming `who`, where the input has no such dimension.
  void resolve(const Tensor& input, int dim, int nInputDims, bool squeeze, const Module& who);

  std::vector<int64_t> sizes;  // the output's
  StridedView base, reduced, spread;
  int64_t outer = 0, size = 0, inner = 0;
};

}  // namespace nn
