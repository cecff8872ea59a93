// The CPU table of LinearKernels: the narrow route's loops and the direct route's tiles
// (nn/cpu/DirectLinear.h) where they fit, else OpenBLAS GEMMs; the bias in plain loops. Where the
// GEMMs multiply in bfloat16 or float16 (the precision medium or autocast, nn/cpu/Blas.h), they
// serve the direct route's shapes too: there they run at about twice the tiles' float32 rate (bench/README.md).
#include "nn/cpu/Blas.h"
#include "nn/cpu/DirectLinear.h"
#include "nn/cpu/Routes.h"
#include "nn/cpu/Tables.h"
#include "nn/math/Linear.h"
#include "nn/runtime/ComputeThreads.h"

namespace nn::cpu {

namespace {

// Each product is cut into parts by rows or by columns of its result, one part per compute
// thread of the device (nn/runtime/ComputeThreads.h): no two parts write the same element, so no sum crosses
// parts. The forward and gradInput products are cut by columns (features) where there are at
// least as many as rows (samples): each part then packs only its share of the weight, which at
// a batch of 128 costs OpenBLAS about as much as the product itself.

// The rows and columns of part p of a [rows, cols] result cut into parts: by columns where there
// are at least as many as rows, else by rows.
struct Block {
  Range rows, cols;
};

template <typename Body>
void forBlocks(const Device& device, int64_t rows, int64_t cols, Body body) {
  const bool byColumns = cols >= rows;
  const int parts = parallelParts(device, byColumns ? cols : rows);
  parallelFor(device, parts, [&](int p) {
    const Range r = partRange(byColumns ? cols : rows, parts, p);
    body(byColumns ? Block{Range{0, rows}, r} : Block{r, Range{0, cols}});
  });
}

void cpuUpdateOutput(const Device& device, const float* x, const float* weight, const float* bias, float* y,
                     int64_t batch, int64_t in, int64_t out, Tensor& workspace) {
  if (narrowLinearFits(batch, in, out)) {
    countRoute(Route::linearNarrow, Pass::forward);
    return narrowLinearUpdateOutput(device, x, weight, bias, y, batch, in, out);
  }
  if (directLinearFits(batch, in, out) && !blas::reducedProducts()) {
    countRoute(Route::linearDirect, Pass::forward);
    return directLinearUpdateOutput(device, x, weight, bias, y, batch, in, out, workspace);
  }
  countRoute(Route::linearBlas, Pass::forward);
  forBlocks(device, batch, out, [&](const Block& b) {
    float beta = 0.f;
    if (bias) {
      for (int64_t i = b.rows.begin; i < b.rows.end; ++i)
        for (int64_t j = b.cols.begin; j < b.cols.end; ++j) y[i * out + j] = bias[j];
      beta = 1.f;
    }
    // y[rows, cols] (+)= x[rows, in] * W[cols, in]^T
    blas::gemm(false, true, b.rows.end - b.rows.begin, b.cols.end - b.cols.begin, in, 1.f, x + b.rows.begin * in, in,
               weight + b.cols.begin * in, in, beta, y + b.rows.begin * out + b.cols.begin, out);
  });
}

void cpuUpdateGradInput(const Device& device, const float* gradY, const float* weight, float* gradX, int64_t batch,
                        int64_t in, int64_t out, Tensor& workspace) {
  if (narrowLinearFits(batch, in, out)) {
    countRoute(Route::linearNarrow, Pass::gradInput);
    return narrowLinearUpdateGradInput(device, gradY, weight, gradX, batch, in, out);
  }
  if (directLinearFits(batch, in, out) && !blas::reducedProducts()) {
    countRoute(Route::linearDirect, Pass::gradInput);
    return directLinearUpdateGradInput(device, gradY, weight, gradX, batch, in, out, workspace);
  }
  countRoute(Route::linearBlas, Pass::gradInput);
  forBlocks(device, batch, in, [&](const Block& b) {
    // gradX[rows, cols] = gradY[rows, out] * W[out, cols]
    blas::gemm(false, false, b.rows.end - b.rows.begin, b.cols.end - b.cols.begin, out, 1.f, gradY + b.rows.begin * out,
               out, weight + b.cols.begin, in, 0.f, gradX + b.rows.begin * in + b.cols.begin, in);
  });
}

// gradB[j] += scale gradY[i][j] for the columns j of r, rows i = 0, 1, ... in that order.
void addBiasGradient(const float* gradY, float* gradBias, int64_t batch, int64_t out, float scale, Range r) {
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t j = r.begin; j < r.end; ++j)
      gradBias[j] = math::biasGradientStep(gradBias[j], scale, gradY[i * out + j]);
}

void cpuAccGradParameters(const Device& device, const float* x, const float* gradY, float* gradWeight, float* gradBias,
                          int64_t batch, int64_t in, int64_t out, float scale) {
  if (narrowLinearFits(batch, in, out)) {
    countRoute(Route::linearNarrow, Pass::gradParameters);
    narrowLinearAccGradWeight(device, x, gradY, gradWeight, batch, in, out, scale);
    if (gradBias) addBiasGradient(gradY, gradBias, batch, out, scale, Range{0, out});
    return;
  }
  countRoute(Route::linearBlas, Pass::gradParameters);
  const int parts = parallelParts(device, out);
  parallelFor(device, parts, [&](int p) {
    const Range r = partRange(out, parts, p);
    // gradW[rows, in] += scale * gradY[batch, rows]^T * x[batch, in]
    blas::gemm(true, false, r.end - r.begin, in, batch, scale, gradY + r.begin, out, x, in, 1.f,
               gradWeight + r.begin * in, in);
    if (gradBias) addBiasGradient(gradY, gradBias, batch, out, scale, r);
  });
}

}  // namespace

LinearKernels linearKernels() {
  LinearKernels k{};
  k.updateOutput = &cpuUpdateOutput;
  k.updateGradInput = &cpuUpdateGradInput;
  k.accGradParameters = &cpuAccGradParameters;
  return k;
}

}  // namespace nn::cpu
