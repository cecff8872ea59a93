// nn::Narrow: resolves Torch7's negative offsets and lengths against the input.
#include "nn/modules/Narrow.h"

#include "nn/tensor/Checked.h"

namespace nn {

NN_REGISTER_MODULE(Narrow);

Narrow::Narrow(const Options& options) : WithOptions(options) {
  NN_CHECK(options_.dim >= 0, toString() << ": expected a dimension of at least 0, got " << options_.dim);
  NN_CHECK(options_.length != 0, toString() << ": expected a length other than 0");
  // No tensor has more indices: beyond, the resolution below could overflow.
  NN_CHECK(isSignedExtent(options_.offset) && isSignedExtent(options_.length),
           toString() << ": expected an offset and a length from " << -kMaxElements << " to " << kMaxElements);
}

NarrowingModule::Slice Narrow::sliceOf(const Tensor& input) const {
  Slice slice;
  slice.dim = options_.dim;
  const int64_t size = slice.dim < input.dim() ? input.size(slice.dim) : 0;
  // Each at most kMaxElements in size: these sums cannot overflow.
  slice.offset = options_.offset < 0 ? size + options_.offset : options_.offset;
  slice.length = options_.length < 0 ? size - slice.offset + options_.length + 1 : options_.length;
  checkSlice(input, slice);
  return slice;
}

}  // namespace nn
