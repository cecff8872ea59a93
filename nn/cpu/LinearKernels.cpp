// The CPU table of LinearKernels: OpenBLAS GEMMs, the bias in plain loops.
#include "nn/Parallel.h"
#include "nn/cpu/Blas.h"
#include "nn/cpu/Tables.h"
#include "nn/math/Linear.h"

namespace nn::cpu {

namespace {

// Each product is cut into parts by rows of its result, one part per compute thread of the
// device (nn/Parallel.h): no two parts write the same element, so no sum crosses parts.

void cpuUpdateOutput(const Device& device, const float* x, const float* weight, const float* bias, float* y,
                     int64_t batch, int64_t in, int64_t out) {
  const int parts = parallelParts(device, batch);
  parallelFor(device, parts, [&](int p) {
    const Range r = partRange(batch, parts, p);
    float beta = 0.f;
    if (bias) {
      for (int64_t i = r.begin; i < r.end; ++i)
        for (int64_t j = 0; j < out; ++j) y[i * out + j] = bias[j];
      beta = 1.f;
    }
    // y[rows, out] (+)= x[rows, in] * W[out, in]^T
    blas::gemm(false, true, r.end - r.begin, out, in, 1.f, x + r.begin * in, in, weight, in, beta, y + r.begin * out,
               out);
  });
}

void cpuUpdateGradInput(const Device& device, const float* gradY, const float* weight, float* gradX, int64_t batch,
                        int64_t in, int64_t out) {
  const int parts = parallelParts(device, batch);
  parallelFor(device, parts, [&](int p) {
    const Range r = partRange(batch, parts, p);
    // gradX[rows, in] = gradY[rows, out] * W[out, in]
    blas::gemm(false, false, r.end - r.begin, in, out, 1.f, gradY + r.begin * out, out, weight, in, 0.f,
               gradX + r.begin * in, in);
  });
}

void cpuAccGradParameters(const Device& device, const float* x, const float* gradY, float* gradWeight, float* gradBias,
                          int64_t batch, int64_t in, int64_t out, float scale) {
  const int parts = parallelParts(device, out);
  parallelFor(device, parts, [&](int p) {
    const Range r = partRange(out, parts, p);
    // gradW[rows, in] += scale * gradY[batch, rows]^T * x[batch, in]
    blas::gemm(true, false, r.end - r.begin, in, batch, scale, gradY + r.begin, out, x, in, 1.f,
               gradWeight + r.begin * in, in);
    if (gradBias)
      for (int64_t i = 0; i < batch; ++i)
        for (int64_t j = r.begin; j < r.end; ++j)
          gradBias[j] = math::biasGradientStep(gradBias[j], scale, gradY[i * out + j]);
  });
}

}  // namespace

LinearKernels linearKernels() { return {&cpuUpdateOutput, &cpuUpdateGradInput, &cpuAccGradParameters}; }

}  // namespace nn::cpu
