// nn::BroadcastShape: how a parameter of some sizes lines up with an input (CMul, Mul, Add),
// and the StridedViews that BroadcastKernels take for it (nn/backend/BroadcastKernels.h).
//
// The parameter's sizes line up with the input's last dimensions, as in NumPy and PyTorch:
// leading dimensions of size 1 of the parameter beyond the input's are dropped, and each of the
// others must equal the input's or be 1 (broadcast along it); CMul(1, C, 1, 1) scales each
// plane. Where they do not, a parameter with the elements of one sample (Torch7's batch mode:
// Add(48) on [N, 3, 4, 4]) or of the whole input lines up with the input flattened.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/backend/TensorKernels.h"

namespace nn {

/// How a parameter lines up with an input (CMul, Mul, Add), as the StridedViews that BroadcastKernels take.
struct BroadcastShape {
  /// The parameter's element of each input element: input element e reads stridedOffset(parameter, e).
  StridedView parameter;
  /// Parameter element j gathers the input elements stridedOffset(base, j) +
  /// stridedOffset(reduced, r) for r < reducedCount.
  StridedView base;
  /// The input elements one parameter element gathers, relative to its base: along the broadcast dimensions.
  StridedView reduced;
  /// The number of input elements each parameter element gathers: the product of the broadcast dimensions.
  int64_t reducedCount = 1;
};

/// The broadcasting of a contiguous parameter of `parameterSizes` against a contiguous input
/// of `inputSizes`; false where they do not line up (the caller names itself and both sizes).
bool broadcastingOf(const std::vector<int64_t>& inputSizes, const std::vector<int64_t>& parameterSizes,
                    BroadcastShape& out);

}  // namespace nn
