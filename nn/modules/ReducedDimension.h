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

/// The dimension a reduction runs along, resolved for one input, with its views (see above).
struct ReducedDimension {
  /// Resolves `dim` for `input`; throws, naming `who`, where the input has no such dimension.
  void resolve(const Tensor& input, int dim, int nInputDims, bool squeeze, const Module& who);

  /// The output's sizes: the input's without the dimension where squeezed (and the input has more
  /// than one dimension), else with it as 1.
  std::vector<int64_t> sizes;
  /// Over the outer x inner output elements: the offset in the contiguous input of the first
  /// element that each output element reduces.
  StridedView base;
  /// Over the `size` elements of one reduction: their offsets from that first element (stride inner).
  StridedView reduced;
  /// Over the input's elements, in order: the offset of the output element each goes to (stride 0
  /// along the dimension), for passes that spread the output back over the input.
  StridedView spread;
  /// The product of the input's sizes before the dimension.
  int64_t outer = 0;
  /// The input's size along the dimension: the elements each output element reduces.
  int64_t size = 0;
  /// The product of the input's sizes after the dimension.
  int64_t inner = 0;
};

}  // namespace nn
