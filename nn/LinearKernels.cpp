// The CPU table of LinearKernels: one OpenBLAS GEMM per product, the bias in plain loops.
#include "nn/LinearKernels.h"

#include "nn/Blas.h"
#include "nn/KernelTable.h"
#include "nn/math/Linear.h"

namespace nn {

namespace {

void cpuUpdateOutput(const Device&, const float* x, const float* weight, const float* bias, float* y, int64_t batch,
                     int64_t in, int64_t out) {
  float beta = 0.f;
  if (bias) {
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t j = 0; j < out; ++j) y[i * out + j] = bias[j];
    beta = 1.f;
  }
  // y[batch, out] (+)= x[batch, in] * W[out, in]^T
  blas::gemm(false, true, batch, out, in, 1.f, x, in, weight, in, beta, y, out);
}

void cpuUpdateGradInput(const Device&, const float* gradY, const float* weight, float* gradX, int64_t batch,
                        int64_t in, int64_t out) {
  // gradX[batch, in] = gradY[batch, out] * W[out, in]
  blas::gemm(false, false, batch, in, out, 1.f, gradY, out, weight, in, 0.f, gradX, in);
}

void cpuAccGradParameters(const Device&, const float* x, const float* gradY, float* gradWeight, float* gradBias,
                          int64_t batch, int64_t in, int64_t out, float scale) {
  // gradW[out, in] += scale * gradY[batch, out]^T * x[batch, in]
  blas::gemm(true, false, out, in, batch, scale, gradY, out, x, in, 1.f, gradWeight, in);
  if (gradBias)
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t j = 0; j < out; ++j) gradBias[j] = math::biasGradientStep(gradBias[j], scale, gradY[i * out + j]);
}

constexpr LinearKernels kCpuKernels{&cpuUpdateOutput, &cpuUpdateGradInput, &cpuAccGradParameters};

}  // namespace

const LinearKernels& linearKernels(const Device& device) {
  return device.isCpu() ? kCpuKernels : KernelTable<LinearKernels>::of(device, "nn.Linear");
}

void registerLinearKernels(DeviceType type, const LinearKernels& kernels) {
  KernelTable<LinearKernels>::install(type, kernels);
}

}  // namespace nn
