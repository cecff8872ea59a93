// TensorKernels: the element-wise tensor operations of nn::Tensor (fill_, add_, mul_, cmul_,
// the comparisons) and its reductions along a dimension on one device type.
#pragma once

#include <cstdint>

#include "nn/math/StridedView.h"
#include "nn/math/TensorOps.h"
#include "nn/tensor/DType.h"
#include "nn/tensor/Device.h"

namespace nn {

/// nn::Tensor's element-wise operations and reductions on one device type, over contiguous float32 arrays
/// (fill takes a strided view), and its conversions between element types.
struct TensorKernels {
  /// Element e of the tensor at ptr (seen as view) = value, for e < count.
  void (*fill)(const Device& device, float* ptr, const StridedView& view, int64_t count, float value);
  /// Element e of dst (of type dstType, seen as dstView) = element e of src (of type srcType, seen
  /// as srcView) converted, for e < count, both on `device` and not overlapping (Tensor::copy_
  /// between types, and of the 16-bit types): widening exact, narrowing by
  /// math::floatToBfloat16 and math::floatToHalf (nn/math/Half.h); between two 16-bit types
  /// through float32. Views' strides count elements of their own type.
  void (*convert)(const Device& device, void* dst, DType dstType, const StridedView& dstView, const void* src,
                  DType srcType, const StridedView& srcView, int64_t count);
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
