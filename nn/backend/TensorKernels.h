// TensorKernels: the element-wise tensor operations of nn::Tensor (fill_, add_, mul_, cmul_,
// the comparisons) and its reductions along a dimension on one device type, and StridedView,
// the way a backend sees a strided tensor.
#pragma once

#include <cstdint>

#include "nn/Device.h"
#include "nn/math/TensorOps.h"

namespace nn {

/// The elements of a strided tensor in row-major order of their indices: element e lies at
/// offset sum_d index_d(e) * strides[d] from the tensor's first element. Dimensions of size 1
/// are left out and dimensions that follow one another in memory are merged, so that a
/// contiguous tensor has one dimension of stride 1, however many it had (none if it holds
/// one element).
struct StridedView {
  static constexpr int kMaxDims = 16;
  int dims = 0;
  int64_t sizes[kMaxDims] = {};
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

struct TensorKernels {
  /// Element e of the tensor at ptr (seen as view) = value, for e < count.
  void (*fill)(const Device& device, float* ptr, const StridedView& view, int64_t count, float value);
  /// dst[i] = math::addScaled(a[i], alpha, src[i]) for i < count (Tensor::add_; dst may be a).
  void (*addScaled)(const Device& device, float* dst, const float* a, const float* src, int64_t count, float alpha);
  /// ptr[i] = math::multiply(ptr[i], value) for i < count (Tensor::mul_).
  void (*scale)(const Device& device, float* ptr, int64_t count, float value);
  /// dst[i] = math::multiply(a[i], b[i]) for i < count (Tensor::cmul_; dst may be a).
  void (*multiply)(const Device& device, float* dst, const float* a, const float* b, int64_t count);
  /// dst[i] = math::divide(dst[i], src[i]) for i < count (Tensor::cdiv_).
  void (*divide)(const Device& device, float* dst, const float* src, int64_t count);
  /// dst[i] = math::compare(op, x[i], y ? y[i] : scalar) for i < count (Tensor::eq, lt, ...).
  void (*compare)(const Device& device, float* dst, const float* x, const float* y, float scalar, int64_t count,
                  math::Comparison op);
  /// dst[o * inner + i] = math::reduceAlong(op, src + o * size * inner + i, size, inner) for
  /// o < outer, i < inner: a contiguous [outer, size, inner] reduced along its middle dimension
  /// (Tensor::sum, mean, max, argmax along a dimension).
  void (*reduce)(const Device& device, float* dst, const float* src, int64_t outer, int64_t size, int64_t inner,
                 math::Reduction op);
};

}  // namespace nn
