// nn::StridedView: how a backend and the formulas (nn/math/Broadcast.h) see a strided tensor.
#pragma once

#include <stdint.h>

namespace nn {

/// The elements of a strided tensor in row-major order of their indices: element e lies at
/// offset sum_d index_d(e) * strides[d] from the tensor's first element. Dimensions of size 1
/// are left out and dimensions that follow one another in memory are merged, so that a
/// contiguous tensor has one dimension of stride 1, however many it had (none if it holds
/// one element).
struct StridedView {
  /// The most dimensions a view holds, after dropping and merging (push fails beyond).
  static constexpr int kMaxDims = 16;
  /// The dimensions in use, sizes[0, dims) and strides[0, dims); 0 for one element.
  int dims = 0;
  /// The size of each dimension in use, outermost first.
  int64_t sizes[kMaxDims] = {};
  /// The stride of each dimension in use, in floats.
  int64_t strides[kMaxDims] = {};

  /// The view of `count` contiguous elements.
  static StridedView contiguous(int64_t count) {
    StridedView v;
    if (count != 1) {
      v.dims = 1;
      v.sizes[0] = count;
      v.strides[0] = 1;
    }
    return v;
  }
  /// True when element e lies at offset e.
  bool isContiguous() const { return dims == 0 || (dims == 1 && strides[0] == 1); }
  /// Appends a dimension inside the others: left out where its size is 1, merged with the last
  /// where that one steps over exactly this one. False where kMaxDims dimensions are taken.
  bool push(int64_t size, int64_t stride) {
    if (size == 1) return true;
    if (dims > 0 && strides[dims - 1] == size * stride) {
      sizes[dims - 1] *= size;
      strides[dims - 1] = stride;
      return true;
    }
    if (dims == kMaxDims) return false;
    sizes[dims] = size;
    strides[dims] = stride;
    ++dims;
    return true;
  }
};

}  // namespace nn
