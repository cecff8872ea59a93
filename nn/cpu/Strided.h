// Walks over the elements of a StridedView on the CPU, for the strided fills and copies.
#pragma once

#include <cstdint>

#include "nn/backend/TensorKernels.h"

namespace nn::cpu {

/// Calls run(e, offset, length) for each run of elements that lie one after another in memory
/// (the innermost dimension where its stride is 1, else single elements): element e of the
/// view, e counted in row-major order, lies at `offset`, and the run holds elements e to
/// e + length - 1 at offset to offset + length - 1.
template <typename Run>
void forEachRun(const StridedView& v, int64_t count, Run run) {
  if (count == 0) return;
  if (v.isContiguous()) {
    run(int64_t{0}, int64_t{0}, count);
    return;
  }
  const int inner = v.dims - 1;
  const bool unitStride = v.strides[inner] == 1;
  const int64_t runLength = unitStride ? v.sizes[inner] : 1;
  int64_t index[StridedView::kMaxDims] = {};
  int64_t offset = 0;
  for (int64_t e = 0; e < count; e += runLength) {
    run(e, offset, runLength);
    // Next run: advance the innermost dimension that the run does not cover.
    int d = unitStride ? inner - 1 : inner;
    for (; d >= 0; --d) {
      offset += v.strides[d];
      if (++index[d] < v.sizes[d]) break;
      offset -= v.strides[d] * v.sizes[d];
      index[d] = 0;
    }
  }
}

}  // namespace nn::cpu
