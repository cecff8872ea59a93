// nn::Select: resolves Torch7's negative index against the input.
#include "nn/modules/Select.h"

#include "nn/tensor/Checked.h"

namespace nn {

NN_REGISTER_MODULE(Select);

Select::Select(const Options& options) : WithOptions(options) {
  NN_CHECK(options_.dim >= 0, toString() << ": expected a dimension of at least 0, got " << options_.dim);
  // No tensor has more indices: beyond, the resolution below could overflow.
  NN_CHECK(isSignedExtent(options_.index), toString() << ": expected an index from " << -kMaxElements << " to "
                                                      << kMaxElements << ", got " << options_.index);
}

NarrowingModule::Slice Select::sliceOf(const Tensor& input) const {
  Slice slice;
  slice.dim = options_.dim;
  const int64_t size = slice.dim < input.dim() ? input.size(slice.dim) : 0;
  // Both at most kMaxElements in size: the sum cannot overflow.
  slice.offset = options_.index < 0 ? size + options_.index : options_.index;
  slice.length = 1;
  slice.keepsDim = false;
  checkSlice(input, slice);
  return slice;
}

}  // namespace nn
