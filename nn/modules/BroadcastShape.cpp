// nn::BroadcastShape: the line-up rules and the views.
#include "nn/modules/BroadcastShape.h"

#include "nn/tensor/Checked.h"

namespace nn {

namespace {

// The views for input sizes `in` and parameter sizes `p` of as many dimensions, each p[d]
// equal to in[d] or 1. Fixed arrays: a steady step allocates nothing.
bool views(const int64_t* in, const int64_t* p, int dims, BroadcastShape& out) {
  out = BroadcastShape();
  int64_t inStride[StridedView::kMaxDims], pStride[StridedView::kMaxDims];
  int64_t is = 1, ps = 1;
  for (int d = dims - 1; d >= 0; --d) {
    inStride[d] = is;
    pStride[d] = ps;
    is *= in[d];
    ps *= p[d];
  }
  for (int d = 0; d < dims; ++d) {
    const bool broadcast = p[d] == 1;
    if (!out.parameter.push(in[d], broadcast ? 0 : pStride[d])) return false;
    if (!out.base.push(p[d], inStride[d])) return false;
    if (!out.reduced.push(broadcast ? in[d] : 1, inStride[d])) return false;
    if (broadcast) out.reducedCount *= in[d];
  }
  return true;
}

}  // namespace

bool broadcastingOf(const std::vector<int64_t>& inputSizes, const std::vector<int64_t>& parameterSizes,
                    BroadcastShape& out) {
  const int inDims = static_cast<int>(inputSizes.size());
  int pDims = static_cast<int>(parameterSizes.size());
  int skip = 0;  // leading 1s of the parameter beyond the input's dimensions
  while (pDims - skip > inDims && parameterSizes[skip] == 1) ++skip;
  if (inDims <= StridedView::kMaxDims && pDims - skip <= inDims) {
    int64_t p[StridedView::kMaxDims];
    bool fits = true;
    for (int d = 0; d < inDims; ++d) {
      const int k = d - (inDims - (pDims - skip));  // the parameter's dimension facing input dimension d
      p[d] = k < 0 ? 1 : parameterSizes[skip + k];
      fits = fits && (p[d] == inputSizes[d] || p[d] == 1);
    }
    if (fits) return views(inputSizes.data(), p, inDims, out);
  }
  // Flattened: the parameter holds one sample's elements, or all of them.
  int64_t inCount = 1, pCount = 1;
  for (int64_t s : inputSizes) inCount *= s;
  for (int64_t s : parameterSizes) pCount *= s;
  if (pCount == inCount) {
    const int64_t one[1] = {inCount};
    return views(one, one, 1, out);
  }
  int64_t batchCount = 0;  // sizes of tensors, but the product of two of them may overflow
  if (inDims >= 2 && inputSizes[0] > 0 && mulInto(pCount, inputSizes[0], batchCount) && batchCount == inCount) {
    const int64_t in[2] = {inputSizes[0], pCount}, p[2] = {1, pCount};
    return views(in, p, 2, out);
  }
  return false;
}

}  // namespace nn
