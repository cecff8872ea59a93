// The CPU table of TensorKernels: plain loops over the nn/math/TensorOps.h formulas.
#include <algorithm>

#include "nn/core/ComputeThreads.h"
#include "nn/cpu/Strided.h"
#include "nn/cpu/Tables.h"
#include "nn/math/TensorOps.h"

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
  k.addScaled = &addScaled;
  k.scale = &scale;
  k.multiply = &multiply;
  k.divide = &divide;
  k.compare = &compare;
  k.reduce = &reduce;
  return k;
}

}  // namespace nn::cpu
