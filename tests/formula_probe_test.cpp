// The nn/math formula headers give the same floats, bit for bit, compiled by g++ and compiled
// by nvcc (host code): the CUDA build does not change what a formula computes on the CPU.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <vector>

#include "tests/FormulaProbe.h"

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
  CHECK(out[0] == 2.f);                      // relu(2)
  CHECK(out[1] == -1.f);                     // gradient passes where a > 0
  CHECK(out[3] == -1.f * (1.f - 0.25f));     // g (1 - y^2), y = 0.5
  CHECK(out[6] == 9.f);                      // (2 - (-1))^2
  CHECK(out[7] == 2.f * (1.f / 7.f) * 3.f);  // 2 norm (a - b)
  CHECK(out[17] == 1.f / (1.f - 0.3f));      // u = 0.25 < 1 - p keeps the element, scaled
  CHECK(out[23] == 2.f);                     // max of (2, -1, 0.25, 0.5)
  CHECK(out[25] == 2.f + 0.5f * -1.f);       // a + d b
  CHECK(out[26] == -2.f);                    // a b
  CHECK(out[27] == 2.f);                     // d > 0: the saved mean a
  CHECK(out[28] == -1.f);                    // and the saved invstd b
  CHECK(out[29] == float(6.0 / 7.0));        // d > 0: the total 3a averaged over 7 terms
  CHECK(out[30] == 1.f / 7.f);               // and the gradients' norm
  CHECK(out[31] == -0.25f);                  // ClassNLL's gradient for the norm c
  REQUIRE(out[8] == Approx(1.0 / std::sqrt(0.25 + 1e-5)));
}
