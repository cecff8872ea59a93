// nn::ReducedDimension: Torch7's dimension rules and the views.
#include "nn/modules/ReducedDimension.h"

#include "nn/modules/Dimension.h"

namespace nn {

void ReducedDimension::resolve(const Tensor& input, int dim, int nInputDims, bool squeeze, const Module& who) {
  const int dims = input.dim();
  const int64_t d = resolveDimension(dim, nInputDims, dims);
  NN_CHECK(dims >= 1 && input.numel() > 0 && d >= 0 && d < dims,
           who.toString() << ": expected a non-empty input with dimension " << dim << batchDimensionNote(nInputDims)
                          << ", got " << input.shapeString());
  outer = 1;
  inner = 1;
  for (int k = 0; k < d; ++k) outer *= input.size(k);
  for (int k = d + 1; k < dims; ++k) inner *= input.size(k);
  size = input.size(d);
  sizes.assign(input.sizes().begin(), input.sizes().end());
  if (squeeze && dims > 1)
    sizes.erase(sizes.begin() + d);
  else
    sizes[d] = 1;
  base = StridedView();
  base.push(outer, size * inner);
  base.push(inner, 1);
  reduced = StridedView();
  reduced.push(size, inner);
  spread = StridedView();
  spread.push(outer, inner);
  spread.push(size, 0);
  spread.push(inner, 1);
}

}  // namespace nn
