// The CPU table of TensorKernels: plain loops over the nn/math/TensorOps.h formulas, and the
// conversions between element types over nn/math/Half.h.
#include <algorithm>
#include <cstring>

#include "nn/cpu/Strided.h"
#include "nn/cpu/Tables.h"
#include "nn/math/Half.h"
#include "nn/math/TensorOps.h"
#include "nn/runtime/ComputeThreads.h"

namespace nn::cpu {

namespace {

// A contiguous tensor on the device's compute threads (zeroGradParameters of a large layer: the
// MLP's 1024 x 1024 weights' gradient in a step on two threads); a strided one on this thread.
void fill(const Device& device, float* ptr, const StridedView& view, int64_t count, float value) {
  if (view.isContiguous()) {
    parallelRanges(device, count, 65536, [&](int64_t begin, int64_t end) { std::fill(ptr + begin, ptr + end, value); });
    return;
  }
  forEachRun(view, count,
             [&](int64_t, int64_t offset, int64_t length) { std::fill(ptr + offset, ptr + offset + length, value); });
}

// Element i of an array of `type` at `p` as a float (exact for every type).
inline float loadAs(DType type, const void* p, int64_t i) {
  switch (type) {
    case DType::Float32:
      return static_cast<const float*>(p)[i];
    case DType::BFloat16:
      return math::bfloat16ToFloat(static_cast<const uint16_t*>(p)[i]);
    case DType::Float16:
      return math::halfToFloat(static_cast<const uint16_t*>(p)[i]);
  }
  return 0.f;
}

// Element i of an array of `type` at `p` = x, rounded to the type (ties to even).
inline void storeAs(DType type, void* p, int64_t i, float x) {
  switch (type) {
    case DType::Float32:
      static_cast<float*>(p)[i] = x;
      return;
    case DType::BFloat16:
      static_cast<uint16_t*>(p)[i] = math::floatToBfloat16(x);
      return;
    case DType::Float16:
      static_cast<uint16_t*>(p)[i] = math::floatToHalf(x);
      return;
  }
}

// Elements [begin, end) of two contiguous arrays: a copy of the bytes where the types agree, else
// one loop per pair of types, so that the compiler vectorises each.
void convertRange(void* dst, DType dstType, const void* src, DType srcType, int64_t begin, int64_t end) {
  if (dstType == srcType) {
    const int64_t size = elementSize(dstType);
    std::memcpy(static_cast<char*>(dst) + begin * size, static_cast<const char*>(src) + begin * size,
                static_cast<size_t>((end - begin) * size));
    return;
  }
  auto* d16 = static_cast<uint16_t*>(dst);
  auto* d32 = static_cast<float*>(dst);
  const auto* s16 = static_cast<const uint16_t*>(src);
  const auto* s32 = static_cast<const float*>(src);
  if (srcType == DType::Float32 && dstType == DType::BFloat16) {
    for (int64_t i = begin; i < end; ++i) d16[i] = math::floatToBfloat16(s32[i]);
  } else if (srcType == DType::Float32 && dstType == DType::Float16) {
    for (int64_t i = begin; i < end; ++i) d16[i] = math::floatToHalf(s32[i]);
  } else if (srcType == DType::BFloat16 && dstType == DType::Float32) {
    for (int64_t i = begin; i < end; ++i) d32[i] = math::bfloat16ToFloat(s16[i]);
  } else if (srcType == DType::Float16 && dstType == DType::Float32) {
    for (int64_t i = begin; i < end; ++i) d32[i] = math::halfToFloat(s16[i]);
  } else {
    for (int64_t i = begin; i < end; ++i) storeAs(dstType, dst, i, loadAs(srcType, src, i));
  }
}

// Contiguous on both sides: on the device's compute threads, as copies are. Strided: element by
// element in row-major order, an index per view.
void convert(const Device& device, void* dst, DType dstType, const StridedView& dstView, const void* src, DType srcType,
             const StridedView& srcView, int64_t count) {
  if (count == 0) return;
  if (dstView.isContiguous() && srcView.isContiguous()) {
    parallelRanges(device, count, 65536,
                   [&](int64_t begin, int64_t end) { convertRange(dst, dstType, src, srcType, begin, end); });
    return;
  }
  int64_t dstIndex[StridedView::kMaxDims] = {}, srcIndex[StridedView::kMaxDims] = {};
  int64_t to = 0, from = 0;
  for (int64_t e = 0; e < count; ++e) {
    storeAs(dstType, dst, to, loadAs(srcType, src, from));
    for (int d = dstView.dims - 1; d >= 0; --d) {
      to += dstView.strides[d];
      if (++dstIndex[d] < dstView.sizes[d]) break;
      to -= dstView.strides[d] * dstView.sizes[d];
      dstIndex[d] = 0;
    }
    for (int d = srcView.dims - 1; d >= 0; --d) {
      from += srcView.strides[d];
      if (++srcIndex[d] < srcView.sizes[d]) break;
      from -= srcView.strides[d] * srcView.sizes[d];
      srcIndex[d] = 0;
    }
  }
}

// On the device's compute threads, as multiply below (CAddTable's sums, ConcatTable's gradInput).
// In place, the loop reads and writes through one pointer, so that the compiler vectorises it
// without a run-time overlap check.
void addScaled(const Device& device, float* dst, const float* a, const float* src, int64_t count, float alpha) {
  parallelRanges(device, count, 16384, [&](int64_t begin, int64_t end) {
    if (dst == a) {
      for (int64_t i = begin; i < end; ++i) dst[i] = math::addScaled(dst[i], alpha, src[i]);
    } else {
      for (int64_t i = begin; i < end; ++i) dst[i] = math::addScaled(a[i], alpha, src[i]);
    }
  });
}

void scale(const Device&, float* ptr, int64_t count, float value) {
  for (int64_t i = 0; i < count; ++i) ptr[i] = math::multiply(ptr[i], value);
}

// On the device's compute threads (a memory-bound loop: Dropout's and CMul's backward).
void multiply(const Device& device, float* dst, const float* a, const float* b, int64_t count) {
  parallelRanges(device, count, 16384, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dst[i] = math::multiply(a[i], b[i]);
  });
}

void divide(const Device&, float* dst, const float* src, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = math::divide(dst[i], src[i]);
}

void compare(const Device&, float* dst, const float* x, const float* y, float scalar, int64_t count,
             math::Comparison op) {
  if (y != nullptr) {
    for (int64_t i = 0; i < count; ++i) dst[i] = math::compare(op, x[i], y[i]);
  } else {
    for (int64_t i = 0; i < count; ++i) dst[i] = math::compare(op, x[i], scalar);
  }
}

void reduce(const Device&, float* dst, const float* src, int64_t outer, int64_t size, int64_t inner,
            math::Reduction op) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      dst[o * inner + i] = math::reduceAlong(op, src + o * size * inner + i, size, inner);
}

}  // namespace

TensorKernels tensorKernels() {
  TensorKernels k{};
  k.fill = &fill;
  k.convert = &convert;
  k.addScaled = &addScaled;
  k.scale = &scale;
  k.multiply = &multiply;
  k.divide = &divide;
  k.compare = &compare;
  k.reduce = &reduce;
  return k;
}

}  // namespace nn::cpu
