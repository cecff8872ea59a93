// The formula probe: nn/math formulas evaluated on the same inputs by code from three
// compilers, so that tests compare the floats: g++ (formula_probe_test.cpp), nvcc's host
// compilation and nvcc's device compilation (FormulaProbe.cu). The formulas rounding only
// by IEEE arithmetic must agree bit for bit everywhere; exp, log and tanh come from the
// host's libm on the CPU and from CUDA's own functions (within 2 ulp) on the GPU.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "nn/math/Activation.h"
#include "nn/math/BatchNorm.h"
#include "nn/math/CrossEntropy.h"
#include "nn/math/Dropout.h"
#include "nn/math/HostDevice.h"
#include "nn/math/Linear.h"
#include "nn/math/Loss.h"
#include "nn/math/PointwiseLoss.h"
#include "nn/math/Pooling.h"
#include "nn/math/Sgd.h"
#include "nn/math/SoftMax.h"
#include "nn/math/TensorOps.h"
#include "nn/tensor/Random.h"

namespace nn::test {

/// Inputs of one sample, (a, b, c, d): a and b anywhere, c in [0, 1), d in [-1, 1).
constexpr int kProbeInputs = 4;
/// Values probeSample writes per sample: the formulas one by one, then the forward and the
/// backward of each activation of math::activation::All, in its order.
constexpr int kFormulaOutputs = 39;
constexpr int kProbeOutputs = kFormulaOutputs + 2 * math::activation::All::kCount;

template <typename... A>
constexpr bool activationUsesLibm(math::activation::List<A...>, int k) {
  const bool forward[] = {A::kForwardLibm...};
  const bool backward[] = {A::kBackwardLibm...};
  return k % 2 == 0 ? forward[k / 2] : backward[k / 2];
}

/// True for the outputs that go through exp, log or tanh (marked so in probeSample, and by
/// the activations' flags).
constexpr bool probeIsTranscendental(int output) {
  if (output >= kFormulaOutputs) return activationUsesLibm(math::activation::All{}, output - kFormulaOutputs);
  return output == 8 || output == 10 || output == 12 || output == 16;
}

// The forward of each activation at a and its backward at x = a, y = d, gradOutput = b, with
// parameters (c, d): values a backward may read as x or as y.
template <typename... A>
static NN_HD void probeActivations(math::activation::List<A...>, float a, float b, float c, float d, float* out) {
  const math::ActivationArgs args{c, d};
  int k = 0;
  ((out[k++] = A(args).forward(a), out[k++] = A(args).backward(a, d, b)), ...);
}

// static, not inline: each translation unit keeps its own copy, compiled by its own
// compiler. The linker merges the copies of an inline function into one, and then every
// side would run the same machine code and the comparison could not fail. The nn::math
// functions themselves are inline; the callers are flattened (every call inlined) for the
// same reason.
static NN_HD void probeSample(const float* in, float* out) {
  const float a = in[0], b = in[1], c = in[2], d = in[3];
  out[0] = math::loss::Mse::term(a, b);
  out[1] = math::loss::Mse::gradient(a, b) * (1.f / 7.f);
  const float invstd = math::batchNormInvstd(c, 1e-5f);
  out[2] = invstd;
  out[3] = math::batchNormOutput(a, b, invstd, d, c);
  out[4] = math::batchNormRunningMean(a, b, 0.1f);
  out[5] = math::batchNormGradInputTraining(a, b, c, invstd, d, c * 0.5f, d * 0.25f);
  float velocity = c;
  const math::SgdStep step{0.1f, 5e-4f, 0.9f, 0.f, true, false};
  out[6] = math::sgdUpdate(a, b, &velocity, step);
  out[7] = velocity;
  out[8] = math::softMaxExp(a, b);  // exp
  out[9] = math::logSoftMaxOutput(a, b, c);
  out[10] = math::logSoftMaxBackward(d, a, b);  // exp
  out[11] = math::dropoutNoise(c, 0.3f);
  out[12] = math::crossEntropyGradient(a, math::LogSumExp{b, c}, d > 0.f, 0.25f);  // exp
  out[13] = math::batchNormRunningVar(a, static_cast<double>(c) * 10.0, 11, 0.1f);
  out[14] = math::batchNormProjection(static_cast<double>(a) * 3.0, c, 7);
  out[15] = math::softMaxOutput(c + 0.5f, d + 2.f);
  const math::LogSumExp lse = math::logSumExp(in, kProbeInputs);
  out[16] = lse.logSum;  // exp, log
  out[17] = lse.max;
  out[18] = math::biasGradientStep(a, d, b);
  // Pooling along one axis, with sizes made from c and d: kernel 1..4, stride 1..3, padding up
  // to half the kernel, input at least the kernel, ceil mode where d > 0; `at` is a coordinate
  // of the input. Integers this small are exact as floats.
  const int64_t kernel = 1 + static_cast<int64_t>((d + 1.f) * 2.f);
  const int64_t stride = 1 + static_cast<int64_t>(c * 3.f);
  const int64_t pad = static_cast<int64_t>(c * static_cast<float>(kernel / 2 + 1));
  const int64_t input = kernel + static_cast<int64_t>(c * 29.f);
  const int64_t at = static_cast<int64_t>(c * static_cast<float>(input));
  const int64_t outputs = math::poolOutputSize(input, kernel, stride, pad, d > 0.f);
  const math::PoolWindow last =
      math::poolWindow(outputs - 1, 0, kernel, kernel, stride, stride, pad, pad, input, input);
  const int64_t divisor =
      math::avgPoolDivisor(last.startY, last.startY, kernel, kernel, input, input, pad, pad, d > 0.5f);
  out[19] = static_cast<float>(outputs);
  out[20] = static_cast<float>(math::poolFirstWindowOver(at, kernel, stride, pad));
  out[21] = static_cast<float>(math::poolEndWindowOver(at, stride, pad, outputs));
  out[22] = static_cast<float>(divisor);
  out[23] = math::poolWindowsDisjoint(input, kernel, stride, pad, outputs) ? 1.f : 0.f;
  out[24] = math::maxPoolTakes(a, b) ? 1.f : 0.f;
  out[25] = math::maxPoolCellGradient(c, d, b);
  // The four inputs as a 2 x 2 plane: its max-pooling window, the mean of its first row, the
  // average of all four over the last window's divisor.
  math::maxPoolWindow(in, 2, 2, 2, 7, out[26], out[27]);
  out[28] = math::avgPoolWindow(in, 2, 0, 1, 0, 2, 2);
  out[29] = math::avgPoolMean(a + b + c + d, divisor);
  out[30] = static_cast<float>(last.y0);  // the last window clipped to the input
  out[31] = static_cast<float>(last.y1);
  out[32] = math::addScaled(a, d, b);
  out[33] = math::multiply(a, b);
  float mean = 0.f, statisticsInvstd = 0.f;
  math::batchNormStatistics(d > 0.f, &a, &b, &b, &c, 1e-5f, 0, &mean, &statisticsInvstd);
  out[34] = mean;
  out[35] = statisticsInvstd;
  out[36] = math::averageLoss(static_cast<double>(a) * 3.0, 7, d > 0.f);
  out[37] = math::lossNorm(7, d > 0.f);
  out[38] = math::classNllGradient(c);
  probeActivations(math::activation::All{}, a, b, c, d, out + kFormulaOutputs);
}

/// Samples for probeSample: a few edge cases (zeros, signed zeros, subnormals, values that
/// overflow exp) and then `randomSamples` from a fixed seed, a and b in [-8, 8).
inline std::vector<float> probeInputs(int64_t randomSamples, uint64_t seed) {
  std::vector<float> in = {
      0.f,    0.f,     0.f,    0.f,    // zeros
      -0.f,   -0.f,    0.f,    -0.f,   // negative zeros
      1e-39f, -1e-39f, 1e-39f, 0.5f,   // subnormals
      30.f,   -30.f,   0.999f, -1.f,   // tanh and sigmoid saturate
      -88.f,  88.f,    0.5f,   0.25f,  // exp(88) is near the largest float
      1e6f,   -1e6f,   0.f,    0.75f,  // exp(2e6) overflows
      100.f,  -100.f,  0.25f,  0.5f,
  };
  Generator generator(seed);
  for (int64_t i = 0; i < randomSamples; ++i) {
    in.push_back(generator.uniform(-8.f, 8.f));
    in.push_back(generator.uniform(-8.f, 8.f));
    in.push_back(generator.uniform());
    in.push_back(generator.uniform(-1.f, 1.f));
  }
  return in;
}

/// probeSample for each of `count` samples (in: count x kProbeInputs floats, out: count x
/// kProbeOutputs), in host code compiled by nvcc.
void probeFormulasNvccHost(const float* in, int64_t count, float* out);

/// probeSample for each of `count` samples in a kernel on the current CUDA device; `in`
/// and `out` are device memory. Queued on `stream`.
void probeFormulasDevice(const float* in, int64_t count, float* out, cudaStream_t stream);

}  // namespace nn::test
