// nn::BatchNormalization and nn::SpatialBatchNormalization: reference values, running
// statistics, gradient checks in both modes, errors and a cross-check with PyTorch 1.13 on
// every device type, and the modules on another device compared with those on the host.
//
// Every device sums the batch statistics (mean, variance, and the backward's sum of g and of
// (x - mean) g) in double (the CPU each sample's row of a feature in float lanes first) and
// rounds them to float once; everything after them is the same
// nn/math/BatchNorm.h formula in float. Where the statistics are sums of small integers they
// are exact in any order, and the results are the CPU's on every device. Elsewhere the CUDA
// kernels sum in another order, and batchNormBound bounds how far their results may lie from
// the CPU's: a reference value the CPU meets within t, CUDA meets within t plus that bound.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>

#include "nn/modules/BatchNormalization.h"
#include "nn/modules/ReLU.h"
#include "nn/modules/Sequential.h"
#include "nn/modules/SpatialBatchNormalization.h"
#include "nn/tensor/Random.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

// x[i] = sin(0.37 i + 1.3 k) * (1 + i % 4) + 0.5 k over the flat index i: the input of step k
// of the PyTorch script in "... match PyTorch 1.13" below.
Tensor stepInput(const std::vector<int64_t>& sizes, int k) {
  std::vector<float> v(nn::product(sizes));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + 1.3 * k) * (1 + i % 4) + 0.5 * k);
  return Tensor::fromVector(sizes, v);
}

// g[i] = cos(0.23 i): the gradOutput of that script.
Tensor stepGradOutput(const std::vector<int64_t>& sizes) {
  std::vector<float> v(nn::product(sizes));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::cos(0.23 * static_cast<double>(i)));
  return Tensor::fromVector(sizes, v);
}

// weight[c] = 0.5 + 0.25 c, bias[c] = 0.1 c - 0.2, as in that script.
void setAffine(nn::BatchNormalization& bn) {
  for (int64_t c = 0; c < bn.nOutput(); ++c) {
    bn.weight.data()[c] = 0.5f + 0.25f * static_cast<float>(c);
    bn.bias.data()[c] = 0.1f * static_cast<float>(c) - 0.2f;
  }
}

std::vector<float> at(const Tensor& t, const std::vector<int64_t>& flatIndices) {
  const std::vector<float> all = t.toVector();
  std::vector<float> out;
  for (int64_t i : flatIndices) out.push_back(all[i]);
  return out;
}

double maxDiff(const std::vector<float>& a, const std::vector<float>& b) {
  return nn::test::maxAbsDiff(Tensor::fromVector({static_cast<int64_t>(a.size())}, a), b);
}

constexpr double kEps = 1.0 / (1 << 24);  // half the spacing of floats in [1, 2)

double maxAbs(const std::vector<float>& v) {
  double largest = 0;
  for (float x : v) largest = std::max(largest, std::fabs(double(x)));
  return largest;
}

// One ulp of floats as large as |v| (at least those in [1, 2)): 2 kEps 2^floor(log2 |v|).
double ulp(double v) { return 2 * kEps * std::exp2(std::floor(std::log2(std::max(1.0, std::fabs(v))))); }

// The per-feature statistics of x [batch, features, ...] (any device), in double: the largest
// |x - mean| and |mean| and the largest invstd = 1 / sqrt(biased variance + eps) over the
// features, and m, the number of values per feature.
struct Statistics {
  double deviation, mean, invstd, count;
};
Statistics statistics(const Tensor& x, double eps) {
  const int64_t batch = x.size(0), features = x.size(1), positions = x.numel() / (batch * features);
  const std::vector<float> v = x.toVector();
  Statistics s{0, 0, 0, static_cast<double>(batch * positions)};
  for (int64_t c = 0; c < features; ++c) {
    double sum = 0, squares = 0;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t p = 0; p < positions; ++p) sum += v[(n * features + c) * positions + p];
    const double mean = sum / s.count;
    double deviation = 0;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t p = 0; p < positions; ++p) {
        const double d = v[(n * features + c) * positions + p] - mean;
        squares += d * d;
        deviation = std::max(deviation, std::fabs(d));
      }
    s.deviation = std::max(s.deviation, deviation);
    s.mean = std::max(s.mean, std::fabs(mean));
    s.invstd = std::max(s.invstd, 1 / std::sqrt(squares / s.count + eps));
  }
  return s;
}

// How far a CUDA module's results of one training step on x (gradOutput below G in size,
// weight below W, bias below B) may lie from the CPU's. The sums in double differ by about
// m 2^-53 of their size, so the mean, the variance and the backward's two sums, rounded to
// float, differ by at most 1 ulp (2 kEps relative), and invstd by at most 2 ulp. With
// X = |x - mean|, M = |mean|, s = invstd:
//   y = (x - mean) invstd w + b:         8 kEps (X + M) s W + 4 kEps |y| for the roundings
//   gradInput = (g - gsum / m - (x - mean) dotp s^2 / m) s w, |dotp / m| <= G X:
//                                        16 kEps (2 G + X^2 G s^2) s W
//   gradWeight += dotp invstd, |dotp| <= m G X:  8 kEps m G X s;   gradBias += gsum: 2 kEps m G
//   the running mean moves by a part of the batch mean, off by 2 kEps M, and is rounded once;
//   the running variance by a part of the unbiased variance (<= X^2 m / (m - 1)), off by 1 ulp.
// (The comparison at the end of this file takes |x|, |g| <= 1, X <= 2, W <= 1.5.)
struct BatchNormBound {
  double output, gradInput, gradWeight, gradBias, runningMean, runningVar;
};
BatchNormBound batchNormBound(const Tensor& x, double eps, double G, double W, double B, double runningMean,
                              double runningVar) {
  const Statistics st = statistics(x, eps);
  const double X = st.deviation, M = st.mean, s = st.invstd, m = st.count;
  return {8 * kEps * (X + M) * s * W + 4 * kEps * (X * s * W + B),
          16 * kEps * (2 * G + X * X * G * s * s) * s * W,
          8 * kEps * m * G * X * s,
          2 * kEps * m * G,
          2 * kEps * M + ulp(runningMean),
          2 * kEps * X * X * m / (m - 1) + ulp(runningVar)};
}

// How far a CUDA module's evaluate-mode output of x may lie from the CPU's where its running
// statistics (`runningMean`, `runningVar` on the CPU) differ from the CPU's by at most dm and
// dv: y = (x - rm) sr w + b with sr = 1 / sqrt(rv + eps) moves by W (dm sr + |x - rm| sr^3 dv / 2),
// plus 2 ulp of sr and the roundings of |y|.
double evaluateBound(const Tensor& x, const std::vector<float>& runningMean, const std::vector<float>& runningVar,
                     double eps, double W, double B, double dm, double dv) {
  const int64_t batch = x.size(0), features = x.size(1), positions = x.numel() / (batch * features);
  const std::vector<float> v = x.toVector();
  double bound = 0;
  for (int64_t c = 0; c < features; ++c) {
    const double sr = 1 / std::sqrt(runningVar[c] + eps);
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t p = 0; p < positions; ++p) {
        const double d = std::fabs(v[(n * features + c) * positions + p] - runningMean[c]);
        bound = std::max(
            bound, W * (dm * sr + d * sr * sr * sr * dv / 2) + 4 * kEps * d * sr * W + 4 * kEps * (d * sr * W + B));
      }
  }
  return bound;
}

}  // namespace

NN_DEVICE_TEST_CASE("BatchNormalization training and evaluate match hand-computed values", "[BatchNormalization]") {
  nn::BatchNormalization bn(2, 0.f);
  bn.weight.copy_(Tensor::fromVector({2}, {2, 0.5f}));
  bn.bias.copy_(Tensor::fromVector({2}, {1, -1}));
  bn.to(kind.device());
  const Tensor x = kind.on(Tensor::fromVector({2, 2}, {1, 2, 3, 6}));
  // Feature 0 holds {1, 3}: mean 2, biased variance 1, normalised {-1, 1}, times 2 plus 1.
  // Feature 1 holds {2, 6}: mean 4, biased variance 4, normalised {-1, 1}, times 0.5 minus 1.
  REQUIRE(nn::test::maxAbsDiff(bn.forward(x), {-1, -1.5f, 3, -0.5f}) < 1e-6);
  // running_mean = 0.9 * 0 + 0.1 * {2, 4}; running_var = 0.9 * 1 + 0.1 * unbiased {2, 8}.
  REQUIRE(nn::test::maxAbsDiff(bn.runningMean, {0.2f, 0.4f}) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(bn.runningVar, {1.1f, 1.7f}) < 1e-6);

  // evaluate() normalises with the running statistics instead, and leaves them alone.
  bn.evaluate();
  const float s0 = std::sqrt(1.1f), s1 = std::sqrt(1.7f);
  REQUIRE(nn::test::maxAbsDiff(bn.forward(x), {(1 - 0.2f) / s0 * 2 + 1, (2 - 0.4f) / s1 * 0.5f - 1,
                                               (3 - 0.2f) / s0 * 2 + 1, (6 - 0.4f) / s1 * 0.5f - 1}) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(bn.runningMean, {0.2f, 0.4f}) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(bn.runningVar, {1.1f, 1.7f}) < 1e-6);
}

NN_DEVICE_TEST_CASE("BatchNormalization backward matches hand-computed values in both modes", "[BatchNormalization]") {
  nn::BatchNormalization bn(1, 0.f);
  bn.weight.fill_(2);
  bn.bias.fill_(0.5f);
  bn.to(kind.device());
  const Tensor x = kind.on(Tensor::fromVector({4, 1}, {1, 1, 3, 3}));
  const Tensor g = kind.on(Tensor::fromVector({4, 1}, {1, 0, 0, 0}));
  // mean 2, biased variance 1, invstd 1: x - mean = {-1, -1, 1, 1}, y = 2 (x - mean) + 0.5.
  REQUIRE(nn::test::maxAbsDiff(bn.forward(x), {-1.5f, -1.5f, 2.5f, 2.5f}) < 1e-6);
  bn.zeroGradParameters();
  bn.backward(x, g);
  // gsum = 1, dotp = sum (x - mean) g = -1, projection = dotp invstd^2 / 4 = -0.25;
  // gradInput = (g - 1/4 + 0.25 (x - mean)) * invstd * 2 = {1, -1, 0, 0}.
  REQUIRE(nn::test::maxAbsDiff(bn.gradInput, {1, -1, 0, 0}) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(bn.gradWeight, {-1}) < 1e-6);  // dotp * invstd
  REQUIRE(nn::test::maxAbsDiff(bn.gradBias, {1}) < 1e-6);     // gsum

  // Evaluate mode: running_mean = 0.2, running_var = 0.9 + 0.1 * 4/3 (unbiased); the
  // statistics are constants, so gradInput = g * 2 / sqrt(running_var), and
  // gradWeight = sum (x - 0.2) g / sqrt(running_var) = 0.8 / sqrt(running_var).
  bn.evaluate();
  const float sd = std::sqrt(0.9f + 0.1f * 4.f / 3.f);
  bn.forward(x);
  bn.zeroGradParameters();
  bn.backward(x, g);
  REQUIRE(nn::test::maxAbsDiff(bn.gradInput, {2 / sd, 0, 0, 0}) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(bn.gradWeight, {0.8f / sd}) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(bn.gradBias, {1}) < 1e-6);
}

NN_DEVICE_TEST_CASE("SpatialBatchNormalization takes statistics over the batch and the positions",
                    "[SpatialBatchNormalization]") {
  nn::SpatialBatchNormalization bn(2, 0.f);
  bn.weight.fill_(1);
  bn.bias.zero_();
  bn.to(kind.device());
  // Plane 0 holds {0, 2 | 4, 6} over two samples of 1x2 positions: mean 3, biased variance 5.
  // Plane 1 holds {1, 1 | 1, 5}: mean 2, biased variance 3.
  const Tensor x = kind.on(Tensor::fromVector({2, 2, 1, 2}, {0, 2, 1, 1, 4, 6, 1, 5}));
  const float r5 = std::sqrt(5.f), r3 = std::sqrt(3.f);
  REQUIRE(nn::test::maxAbsDiff(bn.forward(x), {-3 / r5, -1 / r5, -1 / r3, -1 / r3, 1 / r5, 3 / r5, -1 / r3, 3 / r3}) <
          1e-6);
  // Unbiased variances over 4 values: 20 / 3 and 12 / 3.
  REQUIRE(nn::test::maxAbsDiff(bn.runningMean, {0.3f, 0.2f}) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(bn.runningVar, {0.9f + 0.1f * 20 / 3, 0.9f + 0.1f * 4}) < 1e-6);
}

NN_DEVICE_TEST_CASE("BatchNormalization gradients agree with finite differences in training mode",
                    "[BatchNormalization]") {
  nn::manualSeed(5);
  nn::BatchNormalization bn(5);
  bn.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({7, 5}, 21));
  REQUIRE_THAT(nn::test::checkInputGradient(bn, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(bn, x), nn::test::EachAgreesWithin(1e-3, 2));  // weight and bias

  nn::BatchNormalization plain(5, 1e-5f, 0.1f, false);
  plain.to(kind.device());
  REQUIRE_THAT(nn::test::checkInputGradient(plain, x), nn::test::AgreesWithin(1e-3));
}

NN_DEVICE_TEST_CASE("SpatialBatchNormalization gradients agree with finite differences in training mode",
                    "[SpatialBatchNormalization]") {
  nn::manualSeed(6);
  nn::SpatialBatchNormalization bn(3);
  bn.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({2, 3, 3, 4}, 22));
  REQUIRE_THAT(nn::test::checkInputGradient(bn, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(bn, x), nn::test::EachAgreesWithin(1e-3, 2));
}

NN_DEVICE_TEST_CASE("BatchNormalization gradients agree with finite differences in evaluate mode",
                    "[BatchNormalization][SpatialBatchNormalization]") {
  nn::manualSeed(7);
  nn::BatchNormalization bn(4);
  nn::SpatialBatchNormalization sbn(3);
  bn.to(kind.device());
  sbn.to(kind.device());
  // Two training steps move the running statistics away from 0 and 1.
  for (int k = 0; k < 2; ++k) {
    bn.forward(kind.on(stepInput({6, 4}, k)));
    sbn.forward(kind.on(stepInput({2, 3, 2, 3}, k)));
  }
  const auto check = [&](nn::Module& m, const std::vector<int64_t>& sizes) {
    m.evaluate();
    const Tensor x = kind.on(nn::test::randomTensor(sizes, 23));
    REQUIRE_THAT(nn::test::checkInputGradient(m, x), nn::test::AgreesWithin(1e-3));
    REQUIRE_THAT(nn::test::checkParameterGradients(m, x), nn::test::EachAgreesWithin(1e-3, 2));
  };
  check(bn, {5, 4});
  check(sbn, {2, 3, 2, 3});
}

NN_DEVICE_TEST_CASE("BatchNormalization matches PyTorch 1.13 over two training steps", "[BatchNormalization]") {
  // Produced with PyTorch 1.13 (torch.nn.BatchNorm1d(3), float32):
  //   bn.weight = [0.5 + 0.25 c], bn.bias = [0.1 c - 0.2]; bn.train()
  //   bn(stepInput(0)); y = bn(x := stepInput(1)); y.backward(stepGradOutput)
  //   bn.eval(); bn(x)
  // with the inputs of stepInput and stepGradOutput above, viewed as [6, 3].
  nn::BatchNormalization bn(3);
  setAffine(bn);
  bn.to(kind.device());
  bn.forward(kind.on(stepInput({6, 3}, 0)));
  const Tensor x = kind.on(stepInput({6, 3}, 1));
  bn.forward(x);
  bn.zeroGradParameters();
  bn.backward(x, kind.on(stepGradOutput({6, 3})));
  // On CUDA: |g| <= 1, weight <= 1, |bias| <= 0.2; the running statistics off by the bounds
  // of both steps.
  const std::vector<float> runningMean{0.115453273f, 0.00163906801f, 0.042403847f};
  const std::vector<float> runningVar{1.62794769f, 1.42013109f, 1.69254708f};
  const BatchNormBound first = batchNormBound(stepInput({6, 3}, 0), 1e-5, 1, 1, 0.2, 1, 2);
  const BatchNormBound bound = batchNormBound(x, 1e-5, 1, 1, 0.2, 1, 2);
  const double dm = first.runningMean + bound.runningMean, dv = first.runningVar + bound.runningVar;
  REQUIRE(nn::test::maxAbsDiff(bn.runningMean, runningMean) < 1e-6 + kind.tolerance(dm));
  REQUIRE(nn::test::maxAbsDiff(bn.runningVar, runningVar) < 1e-5 + kind.tolerance(dv));
  REQUIRE(nn::test::maxAbsDiff(
              bn.output, {-0.0228861831f, 0.928612232f, 1.3049053f, 0.479236662f, 0.243200123f, -0.105833434f,
                          -0.631747067f, -1.04504716f, -0.568250775f, -0.891789436f, -1.10992026f, -1.75569654f,
                          -0.457936287f, -0.0493293963f, 0.210335255f, 0.325122565f, 0.432484448f, 0.914540291f}) <
          1e-5 + kind.tolerance(bound.output));
  REQUIRE(nn::test::maxAbsDiff(
              bn.gradInput, {0.289479494f, 0.295484245f, 0.389612675f, 0.154446885f, 0.261530191f, 0.361734778f,
                             0.133563668f, 0.217131376f, 0.0829630643f, -0.0277312584f, -0.0341548845f, -0.0150986202f,
                             -0.218369514f, -0.355002761f, -0.42560938f, -0.331389308f, -0.384988189f, -0.39360255f}) <
          1e-5 + kind.tolerance(bound.gradInput));
  REQUIRE(nn::test::maxAbsDiff(bn.gradWeight, {1.37862158f, 1.88283575f, 1.84735537f}) <
          1e-5 + kind.tolerance(bound.gradWeight));
  REQUIRE(nn::test::maxAbsDiff(bn.gradBias, {-0.398730576f, -0.973041296f, -1.49610472f}) <
          1e-5 + kind.tolerance(bound.gradBias));
  bn.evaluate();
  const double evaluated = evaluateBound(x, runningMean, runningVar, 1e-5, 1, 0.2, dm, dv);
  REQUIRE(nn::test::maxAbsDiff(
              bn.forward(x), {0.328289717f, 1.46616662f, 2.40847278f, 0.997873843f, 0.436289072f, 0.338806599f,
                              -0.483630359f, -1.49938869f, -0.33959648f, -0.8303985f, -1.59686482f, -2.08167386f,
                              -0.251852512f, -0.00325610652f, 0.802651227f, 0.792361677f, 0.720701396f, 1.83577609f}) <
          1e-5 + kind.tolerance(evaluated));
}

NN_DEVICE_TEST_CASE("SpatialBatchNormalization matches PyTorch 1.13 over two training steps",
                    "[SpatialBatchNormalization]") {
  // As above with torch.nn.BatchNorm2d(4, eps=1e-3, momentum=0.2) on [3, 4, 3, 5]; the
  // tables hold the flat elements 0, 17, 59, 100, 143 and 179 of output, gradInput and the
  // evaluate-mode output.
  const std::vector<int64_t> sizes{3, 4, 3, 5};
  const std::vector<int64_t> picked{0, 17, 59, 100, 143, 179};
  nn::SpatialBatchNormalization bn(4, 1e-3f, 0.2f);
  setAffine(bn);
  bn.to(kind.device());
  bn.forward(kind.on(stepInput(sizes, 0)));
  const Tensor x = kind.on(stepInput(sizes, 1));
  bn.forward(x);
  bn.zeroGradParameters();
  bn.backward(x, kind.on(stepGradOutput(sizes)));
  // On CUDA: |g| <= 1, weight <= 1.25, |bias| <= 0.2; the running statistics off by the
  // bounds of both steps.
  const std::vector<float> runningMean{0.0843015164f, 0.111992799f, 0.124398917f, 0.120976023f};
  const std::vector<float> runningVar{1.94362712f, 2.03869772f, 2.04120994f, 2.0662477f};
  const BatchNormBound first = batchNormBound(stepInput(sizes, 0), 1e-3, 1, 1.25, 0.2, 1, maxAbs(runningVar));
  const BatchNormBound bound = batchNormBound(x, 1e-3, 1, 1.25, 0.2, 1, maxAbs(runningVar));
  const double dm = first.runningMean + bound.runningMean, dv = first.runningVar + bound.runningVar;
  REQUIRE(nn::test::maxAbsDiff(bn.runningMean, runningMean) < 1e-6 + kind.tolerance(dm));
  REQUIRE(nn::test::maxAbsDiff(bn.runningVar, runningVar) < 1e-5 + kind.tolerance(dv));
  REQUIRE(maxDiff(at(bn.output, picked), {0.100793056f, 0.618945837f, -2.27868223f, 0.257440418f, -1.15219975f,
                                          -2.51452303f}) < 1e-5 + kind.tolerance(bound.output));
  REQUIRE(maxDiff(at(bn.gradInput, picked), {0.36261332f, -0.381807864f, 0.198740393f, -0.114025414f, -0.081793502f,
                                             -0.752764285f}) < 1e-5 + kind.tolerance(bound.gradInput));
  REQUIRE(nn::test::maxAbsDiff(bn.gradWeight, {0.625530958f, -0.0212672688f, -0.419559538f, 0.696521878f}) <
          1e-5 + kind.tolerance(bound.gradWeight));
  REQUIRE(nn::test::maxAbsDiff(bn.gradBias, {-13.6785164f, 14.3082428f, -13.5877934f, 11.5851498f}) <
          1e-4 + kind.tolerance(bound.gradBias));
  bn.evaluate();
  REQUIRE(maxDiff(at(bn.forward(x), picked),
                  {0.294534832f, 1.11766422f, -2.72863197f, 0.65845871f, -1.40737522f, -3.04768133f}) <
          1e-5 + kind.tolerance(evaluateBound(x, runningMean, runningVar, 1e-3, 1.25, 0.2, dm, dv)));
}

NN_DEVICE_TEST_CASE("BatchNormalization rejects bad input with messages naming the module and the shapes",
                    "[BatchNormalization][SpatialBatchNormalization]") {
  nn::BatchNormalization bn(20);
  bn.to(kind.device());
  REQUIRE_THROWS_WITH(bn.forward(Tensor::zeros({4, 7}, kind.device())), Catch::Contains("nn.BatchNormalization(20)") &&
                                                                            Catch::Contains("[batch, 20]") &&
                                                                            Catch::Contains("[4, 7]"));
  REQUIRE_THROWS_WITH(bn.forward(Tensor::zeros({4, 20, 1}, kind.device())),
                      Catch::Contains("nn.BatchNormalization(20)") && Catch::Contains("[4, 20, 1]"));
  // One value per feature has no variance: an error in training mode, fine in evaluate mode.
  REQUIRE_THROWS_WITH(bn.forward(Tensor::zeros({1, 20}, kind.device())), Catch::Contains("nn.BatchNormalization(20)") &&
                                                                             Catch::Contains("more than one value") &&
                                                                             Catch::Contains("[1, 20]"));
  bn.evaluate();
  REQUIRE(bn.forward(Tensor::zeros({1, 20}, kind.device())).hasSizes({1, 20}));
  bn.training();

  const Tensor x = kind.on(nn::test::randomTensor({4, 20}, 1));
  bn.forward(x);
  REQUIRE_THROWS_WITH(
      bn.backward(x, Tensor::zeros({4, 19}, kind.device())),
      Catch::Contains("nn.BatchNormalization(20)") && Catch::Contains("[4, 20]") && Catch::Contains("[4, 19]"));
  REQUIRE_THROWS_WITH(bn.forward(x.to(kind.other())),
                      Catch::Contains("nn.BatchNormalization(20)") && Catch::Contains(kind.other().str()));
  nn::BatchNormalization fresh(20);
  fresh.to(kind.device());
  REQUIRE_THROWS_WITH(fresh.backward(x, x),
                      Catch::Contains("nn.BatchNormalization(20)") && Catch::Contains("needs a forward"));
  bn.clearState();  // drops the saved batch statistics with the output
  REQUIRE_THROWS_WITH(bn.backward(x, x), Catch::Contains("needs a forward"));

  nn::SpatialBatchNormalization sbn(3, 1e-3f);
  sbn.to(kind.device());
  REQUIRE_THROWS_WITH(sbn.forward(Tensor::zeros({2, 3, 4}, kind.device())),
                      Catch::Contains("nn.SpatialBatchNormalization(3, eps=0.001)") &&
                          Catch::Contains("[batch, 3, height, width]") && Catch::Contains("[2, 3, 4]"));
  REQUIRE_THROWS_WITH(sbn.forward(Tensor::zeros({2, 4, 2, 2}, kind.device())), Catch::Contains("[2, 4, 2, 2]"));
  REQUIRE_THROWS_WITH(sbn.forward(Tensor::zeros({1, 3, 1, 1}, kind.device())), Catch::Contains("more than one value"));
  // A single sample with several positions has a variance.
  REQUIRE(sbn.forward(kind.on(nn::test::randomTensor({1, 3, 2, 2}, 2))).hasSizes({1, 3, 2, 2}));
}

NN_DEVICE_TEST_CASE("BatchNormalization gives the same result for non-contiguous input",
                    "[BatchNormalization][SpatialBatchNormalization]") {
  nn::manualSeed(8);
  const auto compare = [&](nn::BatchNormalization& a, const Tensor& strided) {
    REQUIRE_FALSE(strided.isContiguous());
    nn::ModulePtr b = a.clone();
    const Tensor dense = strided.contiguous();
    const Tensor g = kind.on(nn::test::randomTensor(dense.sizes(), 9));
    a.forward(strided);
    a.backward(strided, g);
    b->forward(dense);
    b->backward(dense, g);
    REQUIRE(nn::test::maxAbsDiff(a.output, b->output) == 0);
    REQUIRE(nn::test::maxAbsDiff(a.gradInput, b->gradInput) == 0);
    const auto [aValues, aGrads] = a.parameters();
    const auto [bValues, bGrads] = b->parameters();
    for (size_t i = 0; i < aGrads.size(); ++i) REQUIRE(nn::test::maxAbsDiff(aGrads[i], bGrads[i]) == 0);
    const auto aState = a.stateDict();
    const auto bState = b->stateDict();
    for (size_t i = 0; i < aState.size(); ++i) REQUIRE(nn::test::maxAbsDiff(aState[i].value, bState[i].value) == 0);
  };
  nn::BatchNormalization bn(5);
  bn.to(kind.device());
  compare(bn, kind.on(nn::test::randomTensor({5, 8}, 10)).transpose(0, 1));
  nn::SpatialBatchNormalization sbn(3);
  sbn.to(kind.device());
  compare(sbn, kind.on(nn::test::randomTensor({2, 3, 4, 6}, 11)).narrow(3, 1, 4));
}

NN_DEVICE_TEST_CASE("BatchNormalization clone is independent and computes the same", "[BatchNormalization]") {
  nn::manualSeed(9);
  nn::SpatialBatchNormalization bn(4, 1e-3f, 0.2f);
  bn.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({2, 4, 3, 3}, 12));
  bn.forward(x);
  nn::ModulePtr copy = bn.clone();
  REQUIRE(copy->typeName() == "nn.SpatialBatchNormalization");
  REQUIRE(copy->toString() == "nn.SpatialBatchNormalization(4, eps=0.001, momentum=0.2)");
  bn.evaluate();
  copy->evaluate();
  // Equal outputs in evaluate mode mean equal running statistics, weight and bias.
  const Tensor expected = bn.forward(x).clone();
  REQUIRE(nn::test::maxAbsDiff(copy->forward(x), expected) == 0);
  auto& twin = dynamic_cast<nn::SpatialBatchNormalization&>(*copy);
  twin.weight.fill_(3);
  twin.runningMean.fill_(7);
  REQUIRE(nn::test::maxAbsDiff(bn.forward(x), expected) == 0);

  nn::BatchNormalization plain(6, 1e-5f, 0.1f, false);
  nn::ModulePtr plainCopy = plain.clone();
  REQUIRE(plainCopy->toString() == "nn.BatchNormalization(6, affine=false)");
  REQUIRE(plainCopy->parameters().first.empty());
}

TEST_CASE("BatchNormalization initialises and names its state as Torch7 and PyTorch", "[BatchNormalization]") {
  nn::manualSeed(2);
  nn::BatchNormalization bn(1000);
  REQUIRE(bn.toString() == "nn.BatchNormalization(1000)");
  float lo = 1, hi = 0;
  for (float v : bn.weight.toVector()) lo = std::min(lo, v), hi = std::max(hi, v);
  REQUIRE(lo >= 0);
  REQUIRE(hi < 1);
  REQUIRE(hi - lo > 0.99f);  // 1000 draws fill [0, 1)
  REQUIRE(bn.bias.sum() == 0);
  REQUIRE(bn.runningMean.sum() == 0);
  REQUIRE(bn.runningVar.sum() == 1000);
  std::vector<std::string> names;
  for (const nn::NamedTensor& t : bn.stateDict()) names.push_back(t.name);
  REQUIRE(names == std::vector<std::string>{"weight", "bias", "running_mean", "running_var"});
  nn::BatchNormalization plain(3, 1e-5f, 0.1f, false);
  names.clear();
  for (const nn::NamedTensor& t : plain.stateDict()) names.push_back(t.name);
  REQUIRE(names == std::vector<std::string>{"running_mean", "running_var"});
}

NN_DEVICE_TEST_CASE("BatchNormalization accGradParameters takes updateGradInput's sums only for the same tensors",
                    "[BatchNormalization]") {
  nn::manualSeed(4);
  nn::SpatialBatchNormalization bn(3);
  bn.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({4, 3, 5, 6}, 15));
  const Tensor g1 = kind.on(nn::test::randomTensor({4, 3, 5, 6}, 16));
  const Tensor g2 = kind.on(nn::test::randomTensor({4, 3, 5, 6}, 17));
  bn.forward(x);
  // The parameter gradients of g2 summed afresh, with no updateGradInput before.
  bn.zeroGradParameters();
  bn.accGradParameters(x, g2, 0.5f);
  const Tensor fresh = bn.gradWeight.clone(), freshBias = bn.gradBias.clone();
  REQUIRE(nn::test::maxAbsDiff(fresh, std::vector<float>(3, 0.f)) > 0);
  // After updateGradInput of g1, accGradParameters of g2 must not take g1's sums.
  bn.zeroGradParameters();
  bn.updateGradInput(x, g1);
  bn.accGradParameters(x, g2, 0.5f);
  CHECK(nn::test::maxAbsDiff(bn.gradWeight, fresh) == 0);
  CHECK(nn::test::maxAbsDiff(bn.gradBias, freshBias) == 0);
  // backward of g2 (updateGradInput, then accGradParameters of the same tensors) gives the same
  // floats from the saved sums, once: a second accGradParameters sums again, adding as much.
  bn.zeroGradParameters();
  bn.backward(x, g2, 0.5f);
  CHECK(nn::test::maxAbsDiff(bn.gradWeight, fresh) == 0);
  CHECK(nn::test::maxAbsDiff(bn.gradBias, freshBias) == 0);
  bn.accGradParameters(x, g2, 0.5f);
  CHECK(nn::test::maxAbsDiff(bn.gradWeight, fresh.clone().mul_(2.f)) == 0);
  // A forward in between changes the saved statistics: the sums of x about the old mean no
  // longer serve, even for the same tensors.
  bn.zeroGradParameters();
  bn.updateGradInput(x, g2);
  bn.forward(kind.on(nn::test::randomTensor({4, 3, 5, 6}, 18)));
  bn.accGradParameters(x, g2, 0.5f);
  const Tensor afterForward = bn.gradWeight.clone();
  bn.zeroGradParameters();
  bn.accGradParameters(x, g2, 0.5f);
  CHECK(nn::test::maxAbsDiff(bn.gradWeight, afterForward) == 0);
  CHECK(nn::test::maxAbsDiff(afterForward, fresh) > 0);
}

NN_DEVICE_TEST_CASE("BatchNormalization allocates nothing in a steady training step", "[BatchNormalization]") {
  nn::SpatialBatchNormalization bn(3);
  bn.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({2, 3, 4, 4}, 13));
  const Tensor g = kind.on(nn::test::randomTensor({2, 3, 4, 4}, 14));
  bn.forward(x);
  bn.backward(x, g);
  const int64_t before = nn::storageAllocationCount();
  bn.forward(x);
  bn.backward(x, g);
  REQUIRE(nn::storageAllocationCount() == before);
}

NN_DEVICE_TEST_CASE("BatchNormalization and SpatialBatchNormalization on another device agree with the host's",
                    "[BatchNormalization][SpatialBatchNormalization]") {
  // [15, 7]: 15 values per feature; [3, 5, 11, 13]: 429 per plane, more than one CUDA block's
  // threads (256), so each thread sums several. Inputs and gradOutputs non-contiguous.
  const nn::Device device = kind.compared();
  const std::vector<std::vector<int64_t>> shapes{{15, 7}, {3, 5, 11, 13}};
  for (const std::vector<int64_t>& sizes : shapes) {
    CAPTURE(sizes);
    const int64_t features = sizes[1];
    const double m = double(Tensor::empty(sizes).numel() / features);
    std::shared_ptr<nn::BatchNormalization> reference;
    if (sizes.size() == 2)
      reference = std::make_shared<nn::BatchNormalization>(features);
    else
      reference = std::make_shared<nn::SpatialBatchNormalization>(features);
    reference->weight.copy_(nn::test::randomTensor({features}, 81, 0.5f, 1.5f));
    reference->bias.copy_(nn::test::randomTensor({features}, 82));
    const nn::ModulePtr fresh = reference->clone();  // for evaluation mode, before any training
    auto tested = std::dynamic_pointer_cast<nn::BatchNormalization>(reference->clone());
    tested->to(device);
    const Tensor x = nn::test::randomTensor(sizes, 83);
    const Tensor g = nn::test::randomTensor(sizes, 84);
    const Tensor xOn = nn::test::stridedOn(x, device), gOn = nn::test::stridedOn(g, device);

    // Training mode: batchNormBound with |x|, |g|, |mean| <= 1, |x - mean| <= 2, weight <= 1.5
    // and invstd <= s (computed from x); in its terms:
    //   y:          8 kEps * 3 s * 1.5 + 4 kEps |y|
    //   gradInput:  16 kEps * (2 + 4 s^2) s * 1.5
    //   gradWeight: 8 kEps * 2m s;   gradBias: 2 kEps m
    // The running statistics moved by a tenth of the batch mean (<= 1) and unbiased variance
    // (<= 4 m / (m - 1) for |x - mean| <= 2), each off by 1 ulp.
    const double s = statistics(x, reference->eps()).invstd;
    const std::vector<float> y = reference->forward(x).toVector();
    REQUIRE(nn::test::maxAbsDiff(tested->forward(xOn), y) <=
            kind.tolerance(8 * kEps * 3 * s * 1.5 + 4 * kEps * maxAbs(y)));
    reference->zeroGradParameters();
    tested->zeroGradParameters();
    const Tensor gi = reference->backward(x, g).clone();
    REQUIRE(nn::test::maxAbsDiff(tested->backward(xOn, gOn), gi) <=
            kind.tolerance(16 * kEps * (2 + 4 * s * s) * s * 1.5));
    REQUIRE(nn::test::maxAbsDiff(tested->gradWeight, reference->gradWeight) <= kind.tolerance(8 * kEps * 2 * m * s));
    REQUIRE(nn::test::maxAbsDiff(tested->gradBias, reference->gradBias) <= kind.tolerance(2 * kEps * m));
    REQUIRE(nn::test::maxAbsDiff(tested->runningMean, reference->runningMean) <= kind.tolerance(2 * kEps));
    REQUIRE(nn::test::maxAbsDiff(tested->runningVar, reference->runningVar) <=
            kind.tolerance(2 * kEps * 4 * m / (m - 1) + 2 * kEps));

    // Evaluation mode with equal running statistics: output and gradInput are element-wise
    // formulas of the same floats, equal bit for bit; the parameter gradients are sums.
    auto evalReference = std::dynamic_pointer_cast<nn::BatchNormalization>(fresh);
    auto evalTested = std::dynamic_pointer_cast<nn::BatchNormalization>(fresh->clone());
    evalTested->to(device);
    evalReference->evaluate();
    evalTested->evaluate();
    REQUIRE(evalTested->forward(xOn).toVector() == evalReference->forward(x).toVector());
    evalReference->zeroGradParameters();
    evalTested->zeroGradParameters();
    REQUIRE(evalTested->backward(xOn, gOn).toVector() == evalReference->backward(x, g).toVector());
    // invstd = 1 / sqrt(1 + eps) < 1 and the mean 0: |dotp| <= m, |gsum| <= m.
    REQUIRE(nn::test::maxAbsDiff(evalTested->gradWeight, evalReference->gradWeight) <= kind.tolerance(4 * kEps * m));
    REQUIRE(nn::test::maxAbsDiff(evalTested->gradBias, evalReference->gradBias) <= kind.tolerance(2 * kEps * m));
  }
}

// Note [Batch normalisation, then ReLU] (nn/math/BatchNorm.h): in a Sequential the pair runs as
// one module, with the floats of the two run one after the other.
NN_DEVICE_TEST_CASE("BatchNormalization then ReLU(true) in a Sequential give the floats of the two modules in turn",
                    "[BatchNormalization][SpatialBatchNormalization][ReLU]") {
  for (const bool spatial : {false, true})
    for (const bool training : {true, false})
      for (const bool firstGradInput : {true, false}) {
        CAPTURE(spatial, training, firstGradInput);
        nn::manualSeed(11);
        std::shared_ptr<nn::BatchNormalization> bn;
        if (spatial)
          bn = std::make_shared<nn::SpatialBatchNormalization>(3);
        else
          bn = std::make_shared<nn::BatchNormalization>(3);
        bn->bias.copy_(Tensor::fromVector({3}, {0.1f, -0.2f, 0.f}));
        const auto alone = std::dynamic_pointer_cast<nn::BatchNormalization>(bn->clone());
        auto relu = std::make_shared<nn::ReLU>(true);
        nn::ReLU aloneRelu(true);
        nn::Sequential pair{bn, relu};
        pair.to(kind.device());
        alone->to(kind.device());
        pair.setGradInputNeeded(firstGradInput);
        const std::vector<int64_t> sizes = spatial ? std::vector<int64_t>{4, 3, 2, 3} : std::vector<int64_t>{9, 3};
        const Tensor x = kind.on(nn::test::randomTensor(sizes, 31));
        const Tensor g = kind.on(nn::test::randomTensor(sizes, 32));
        if (!training) {  // running statistics away from 0 and 1, then evaluation
          pair.forward(kind.on(stepInput(sizes, 1)));
          alone->forward(kind.on(stepInput(sizes, 1)));
          pair.evaluate();
          alone->evaluate();
        }

        const Tensor& y = pair.forward(x);
        aloneRelu.forward(alone->forward(x));
        const std::vector<float> expected = aloneRelu.output.toVector();
        REQUIRE(y.toVector() == expected);
        REQUIRE(y.rawData() == bn->output.rawData());  // the ReLU still works in place
        const auto zeros = std::count(expected.begin(), expected.end(), 0.f);
        REQUIRE(zeros > 0);
        REQUIRE(zeros < static_cast<int64_t>(expected.size()));

        pair.zeroGradParameters();
        alone->zeroGradParameters();
        const std::vector<float> gradInput = pair.backward(x, g).toVector();
        const Tensor& aloneGradOutput = aloneRelu.backward(alone->output, g.clone());
        if (firstGradInput)
          REQUIRE(gradInput == alone->backward(x, aloneGradOutput).toVector());
        else
          alone->accGradParameters(x, aloneGradOutput, 1.f);
        REQUIRE(bn->gradWeight.toVector() == alone->gradWeight.toVector());
        REQUIRE(bn->gradBias.toVector() == alone->gradBias.toVector());

        // Alone again afterwards: the ReLU applies its formula itself.
        REQUIRE(relu->forward(kind.on(Tensor::fromVector({2}, {-1.f, 2.f}))).toVector() ==
                std::vector<float>{0.f, 2.f});
      }
}

// Planes of 512 positions or more are read a line at a time (kStreamedRow in
// nn/cpu/BatchNormKernels.cpp): their output, gradInput and parameter gradients against the
// formulas in double, with 16 lanes and a tail of one (23x23) and with none (16x32); and the
// pair with ReLU(true) against the two modules in turn.
NN_DEVICE_TEST_CASE("SpatialBatchNormalization on planes of 512 positions or more matches the formulas in double",
                    "[SpatialBatchNormalization][ReLU]") {
  for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{3, 2, 23, 23}, std::vector<int64_t>{2, 2, 16, 32}}) {
    CAPTURE(sizes);
    nn::manualSeed(12);
    auto bn = std::make_shared<nn::SpatialBatchNormalization>(2);
    bn->weight.copy_(Tensor::fromVector({2}, {1.5f, -0.5f}));
    bn->bias.copy_(Tensor::fromVector({2}, {0.25f, -0.1f}));
    const auto alone = std::dynamic_pointer_cast<nn::BatchNormalization>(bn->clone());
    alone->to(kind.device());
    const Tensor x = nn::test::randomTensor(sizes, 33), g = nn::test::randomTensor(sizes, 34);
    const std::vector<float> xs = x.toVector(), gs = g.toVector();
    const int64_t batch = sizes[0], planes = sizes[1], positions = sizes[2] * sizes[3], m = batch * positions;
    const std::vector<double> w{1.5, -0.5}, b{0.25, -0.1};
    std::vector<double> y(xs.size()), gi(xs.size()), gw(2), gb(2);
    for (int64_t c = 0; c < planes; ++c) {
      auto at = [&](int64_t n, int64_t p) { return static_cast<size_t>((n * planes + c) * positions + p); };
      double mean = 0, var = 0, sumG = 0, sumGX = 0;
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t p = 0; p < positions; ++p) mean += xs[at(n, p)];
      mean /= m;
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t p = 0; p < positions; ++p) var += (xs[at(n, p)] - mean) * (xs[at(n, p)] - mean);
      const double invstd = 1 / std::sqrt(var / m + 1e-5);
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t p = 0; p < positions; ++p) {
          const double xhat = (xs[at(n, p)] - mean) * invstd;
          y[at(n, p)] = w[c] * xhat + b[c];
          sumG += gs[at(n, p)];
          sumGX += gs[at(n, p)] * xhat;
        }
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t p = 0; p < positions; ++p) {
          const double xhat = (xs[at(n, p)] - mean) * invstd;
          gi[at(n, p)] = w[c] * invstd / m * (m * gs[at(n, p)] - sumG - xhat * sumGX);
        }
      gw[c] = sumGX;
      gb[c] = sumG;
    }
    bn->to(kind.device());
    bn->zeroGradParameters();
    const std::vector<float> out = bn->forward(kind.on(x)).toVector();
    const std::vector<float> gradInput = bn->backward(kind.on(x), kind.on(g)).toVector();
    double worstY = 0, worstGi = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      worstY = std::max(worstY, std::fabs(out[i] - y[i]));
      worstGi = std::max(worstGi, std::fabs(gradInput[i] - gi[i]));
    }
    CHECK(worstY < 1e-5);
    CHECK(worstGi < 1e-5);
    const std::vector<float> gradWeight = bn->gradWeight.toVector(), gradBias = bn->gradBias.toVector();
    for (size_t c = 0; c < 2; ++c) {
      CHECK(std::fabs(gradWeight[c] - gw[c]) < 1e-4 * (1 + std::fabs(gw[c])));
      CHECK(std::fabs(gradBias[c] - gb[c]) < 1e-4 * (1 + std::fabs(gb[c])));
    }

    // With ReLU(true) after it in a Sequential: the floats of the two modules in turn.
    auto relu = std::make_shared<nn::ReLU>(true);
    nn::Sequential pair{bn, relu};
    nn::ReLU aloneRelu(true);
    pair.zeroGradParameters();
    alone->zeroGradParameters();
    REQUIRE(pair.forward(kind.on(x)).toVector() == aloneRelu.forward(alone->forward(kind.on(x))).toVector());
    const Tensor& aloneGradOutput = aloneRelu.backward(alone->output, kind.on(g));
    REQUIRE(pair.backward(kind.on(x), kind.on(g)).toVector() ==
            alone->backward(kind.on(x), aloneGradOutput).toVector());
    REQUIRE(bn->gradWeight.toVector() == alone->gradWeight.toVector());
    REQUIRE(bn->gradBias.toVector() == alone->gradBias.toVector());
  }
}

NN_DEVICE_TEST_CASE("BatchNormalization then ReLU(true) in a Sequential: gradients agree with finite differences",
                    "[BatchNormalization][SpatialBatchNormalization][ReLU]") {
  nn::manualSeed(12);
  auto bn = std::make_shared<nn::SpatialBatchNormalization>(3);
  bn->bias.copy_(Tensor::fromVector({3}, {0.2f, -0.3f, 0.f}));
  nn::Sequential pair{bn, std::make_shared<nn::ReLU>(true)};
  pair.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({3, 3, 2, 3}, 33));
  REQUIRE_THAT(nn::test::checkInputGradient(pair, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(pair, x), nn::test::EachAgreesWithin(1e-3, 2));
}
