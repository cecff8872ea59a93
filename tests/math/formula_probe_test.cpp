// The nn/math formula headers give the same floats, bit for bit, compiled by g++ and compiled
// by nvcc (host code): the CUDA build does not change what a formula computes on the CPU. And,
// tagged [gpu], in a kernel on a CUDA device they give the CPU's floats, within CUDA's own
// exp, log and tanh.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <vector>

#include "nn/cuda/CudaBackend.h"
#include "nn/tensor/Tensor.h"
#include "tests/math/FormulaProbe.h"

using nn::test::kProbeInputs;
using nn::test::kProbeOutputs;

namespace {

// The loop of probeFormulasNvccHost, compiled by g++; flattened for the reason given at
// probeSample.
__attribute__((flatten)) void probeFormulasGcc(const float* in, int64_t count, float* out) {
  for (int64_t i = 0; i < count; ++i) nn::test::probeSample(in + i * kProbeInputs, out + i * kProbeOutputs);
}

uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof(u));
  return u;
}

}  // namespace

TEST_CASE("nn/math formulas compiled by nvcc give g++'s floats bit for bit", "[FormulaProbe]") {
  const std::vector<float> in = nn::test::probeInputs(4096, 17);
  const int64_t count = static_cast<int64_t>(in.size()) / kProbeInputs;
  std::vector<float> gcc(count * kProbeOutputs, -1.f), nvcc(count * kProbeOutputs, -2.f);
  probeFormulasGcc(in.data(), count, gcc.data());
  nn::test::probeFormulasNvccHost(in.data(), count, nvcc.data());
  int64_t differing = 0;
  for (int64_t i = 0; i < count; ++i)
    for (int k = 0; k < kProbeOutputs; ++k) {
      const int64_t at = i * kProbeOutputs + k;
      if (bits(gcc[at]) == bits(nvcc[at])) continue;
      if (++differing <= 5) {
        INFO(std::setprecision(9) << "sample " << i << " (a = " << in[i * kProbeInputs]
                                  << ", b = " << in[i * kProbeInputs + 1] << ", c = " << in[i * kProbeInputs + 2]
                                  << ", d = " << in[i * kProbeInputs + 3] << "), output " << k << ": g++ " << gcc[at]
                                  << ", nvcc " << nvcc[at]);
        CHECK(bits(gcc[at]) == bits(nvcc[at]));
      }
    }
  REQUIRE(differing == 0);
}

TEST_CASE("the formula probe sees what each formula computes", "[FormulaProbe]") {
  // One sample checked against the formulas written out, so the bitwise comparison above
  // compares real results (a probe writing nothing would also agree with itself).
  const float in[kProbeInputs] = {2.f, -1.f, 0.25f, 0.5f};
  float out[kProbeOutputs];
  probeFormulasGcc(in, 1, out);
  CHECK(out[0] == 9.f);                      // (2 - (-1))^2
  CHECK(out[1] == 2.f * (1.f / 7.f) * 3.f);  // 2 norm (a - b)
  CHECK(out[11] == 1.f / (1.f - 0.3f));      // u = 0.25 < 1 - p keeps the element, scaled
  CHECK(out[17] == 2.f);                     // max of (2, -1, 0.25, 0.5)
  // Pooling: kernel 1 + int(1.5 * 2) = 4, stride 1 + int(0.75) = 1, padding int(0.25 * 3) = 0,
  // input 4 + int(7.25) = 11 and at = int(0.25 * 11) = 2, ceil mode (d > 0).
  CHECK(out[19] == 8.f);  // (11 - 4) / 1 + 1 windows
  CHECK(out[20] == 0.f);  // windows [0, 4), [1, 5) and [2, 6) hold cell 2
  CHECK(out[21] == 3.f);
  CHECK(out[22] == 16.f);  // the last window, [7, 11) on both axes, lies inside the input
  CHECK(out[23] == 0.f);   // kernel 4, stride 1: the windows overlap
  CHECK(out[24] == 1.f);   // 2 > -1
  CHECK(out[25] == 0.f);   // cell 0.25 did not win (the winner is 0.5)
  CHECK(out[26] == 2.f);   // the maximum of {2, -1, 0.25, 0.5}, the plane's cell 0, at index 7 + 0
  CHECK(out[27] == 7.f);
  CHECK(out[28] == 0.5f);  // (2 + -1) / 2
  CHECK(out[29] == 1.75f / 16.f);
  CHECK(out[30] == 7.f);
  CHECK(out[31] == 11.f);
  CHECK(out[32] == 2.f + 0.5f * -1.f);  // a + d b
  CHECK(out[33] == -2.f);               // a b
  CHECK(out[34] == 2.f);                // d > 0: the saved mean a
  CHECK(out[35] == -1.f);               // and the saved invstd b
  CHECK(out[36] == float(6.0 / 7.0));   // d > 0: the total 3a averaged over 7 terms
  CHECK(out[37] == 1.f / 7.f);          // and the gradients' norm
  CHECK(out[38] == -0.25f);             // ClassNLL's gradient for the norm c
  // The activations from kFormulaOutputs on: ReLU's forward and backward, then Tanh's.
  CHECK(out[nn::test::kFormulaOutputs] == 2.f);                             // relu(2)
  CHECK(out[nn::test::kFormulaOutputs + 1] == -1.f);                        // gradient passes where a > 0
  CHECK(out[nn::test::kFormulaOutputs + 3] == -1.f * (1.f - 0.5f * 0.5f));  // g (1 - y^2), y = d = 0.5
  REQUIRE(out[2] == Approx(1.0 / std::sqrt(0.25 + 1e-5)));
}

TEST_CASE("the nn/math formulas give the CPU's floats on the GPU", "[gpu]") {
  const std::vector<float> in = nn::test::probeInputs(4096, 23);
  const int64_t count = static_cast<int64_t>(in.size()) / kProbeInputs;
  std::vector<float> cpu(count * kProbeOutputs);
  for (int64_t i = 0; i < count; ++i)
    nn::test::probeSample(in.data() + i * kProbeInputs, cpu.data() + i * kProbeOutputs);

  const nn::Device gpu = nn::Device::cuda(0);
  const nn::Tensor inGpu = nn::Tensor::fromVector({static_cast<int64_t>(in.size())}, in, gpu);
  const nn::Tensor outGpu = nn::Tensor::empty({static_cast<int64_t>(cpu.size())}, gpu);
  nn::test::probeFormulasDevice(inGpu.rawData(), count, outGpu.rawData(), nn::CudaBackend::instance().stream(0));
  const std::vector<float> device = outGpu.toVector();

  // Plain arithmetic, sqrt and division round the same on both (no fused multiply-add on
  // either side, IEEE division and sqrt on the GPU): equal bit for bit. exp, log and tanh are
  // CUDA's own on the GPU, within 2 ulp of the correctly rounded value; a subtraction after
  // them (g - exp(y) * sum) can leave that error large against a small result, hence a bound
  // relative to max(1, |value|), the inputs being at most 8 in size.
  int64_t differing = 0;
  for (int64_t i = 0; i < count; ++i)
    for (int k = 0; k < kProbeOutputs; ++k) {
      const size_t at = i * kProbeOutputs + k;
      const float c = cpu[at], g = device[at];
      const bool same = nn::test::probeIsTranscendental(k)
                            ? (c == g || std::fabs(double(c) - g) <= 1e-5 * std::max(1.0, std::fabs(double(c))))
                            : bits(c) == bits(g);
      if (same || ++differing > 5) continue;
      INFO("sample " << i << ", output " << k << ": CPU " << c << ", GPU " << g);
      CHECK(same);
    }
  REQUIRE(differing == 0);
}
