// nn::LayerNorm and nn::GroupNorm (PyTorch's nn.LayerNorm and nn.GroupNorm): reference values by
// hand and from PyTorch (tests/reference/NormalizationReference.h, from tests/reference/make_normalization_reference.py),
// finite differences for the input, weight and bias, errors naming the module and the shapes,
// non-contiguous input, clone, save and load, the same floats on any number of compute threads
// and in both instruction-set forms, and the host's results on another device.
//
// Every device sums a row's statistics (mean, variance, and the backward's sums of g weight and
// of (x - mean) g weight) and each parameter's gradient in double and rounds them to float once;
// everything after them is the same nn/math/Normalization.h formula in float. The CUDA kernels
// sum in another order, and normalizationBound bounds how far their results may lie from the
// CPU's: a reference value the CPU meets within t, CUDA meets within t plus that bound.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <vector>

#include "nn/cpu/Isa.h"
#include "nn/modules/GroupNorm.h"
#include "nn/modules/LayerNorm.h"
#include "nn/runtime/ComputeThreads.h"
#include "nn/tensor/Random.h"
#include "tests/support/ActivationChecks.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/reference/NormalizationReference.h"
#include "tests/support/Routes.h"

using nn::Tensor;

namespace {

constexpr double kEps = 1.0 / (1 << 24);  // half the spacing of floats in [1, 2)

// The formulas of tests/reference/make_normalization_reference.py, over flat row-major indices.
Tensor referenceInput(const std::vector<int64_t>& sizes) { return nn::test::exactValues(sizes, 5, 17, 8, 8); }
Tensor referenceGradOutput(const std::vector<int64_t>& sizes) { return nn::test::exactValues(sizes, 7, 13, 6, 4); }
Tensor referenceWeight(const std::vector<int64_t>& sizes) { return nn::test::exactValues(sizes, 3, 7, -1, 4); }
Tensor referenceBias(const std::vector<int64_t>& sizes) { return nn::test::exactValues(sizes, 2, 5, 2, 8); }

// The statistics of x seen as rows of `groupSize` values (any device), in double: the largest
// |x - mean|, |mean| and invstd = 1 / sqrt(biased variance + eps) over the rows.
struct Statistics {
  double deviation, mean, invstd;
};
Statistics statistics(const Tensor& x, int64_t groupSize, double eps) {
  const std::vector<float> v = x.contiguous().toVector();
  Statistics s{0, 0, 0};
  for (size_t first = 0; first < v.size(); first += static_cast<size_t>(groupSize)) {
    double sum = 0, squares = 0;
    for (int64_t k = 0; k < groupSize; ++k) sum += v[first + k];
    const double mean = sum / static_cast<double>(groupSize);
    for (int64_t k = 0; k < groupSize; ++k) {
      const double d = v[first + k] - mean;
      squares += d * d;
      s.deviation = std::max(s.deviation, std::fabs(d));
    }
    s.mean = std::max(s.mean, std::fabs(mean));
    s.invstd = std::max(s.invstd, 1 / std::sqrt(squares / static_cast<double>(groupSize) + eps));
  }
  return s;
}

// How far a CUDA module's results on x (rows of groupSize values; gradOutput below G in size,
// weight below W, bias below B; `count` values per parameter) may lie from the CPU's. The sums
// in double differ by about m 2^-53 of their size, so the mean and the backward's two sums,
// rounded to float, differ by at most 1 ulp (2 kEps relative), and invstd by at most 2 ulp.
// With X = |x - mean|, M = |mean|, s = invstd:
//   y = (x - mean) invstd w + b:        8 kEps (X + M) s W + 4 kEps (X s W + B) for the roundings
//   gradInput = (gy - gsum / m - (x - mean) dotp s^2 / m) s, gy = g w, |dotp / m| <= G W X:
//                                       16 kEps (2 G W + X^2 G W s^2) s
//   gradWeight: count terms g (x - mean) invstd, each off by G (2 kEps M s + 8 kEps X s) through
//   the statistics and its own rounding, the sum rounded once: count G s kEps (2 M + 10 X)
//   gradBias: sums of the same floats in double, rounded once: 2 kEps count G.
struct NormalizationBound {
  double output, gradInput, gradWeight, gradBias;
};
NormalizationBound normalizationBound(const Tensor& x, int64_t groupSize, double eps, double G, double W, double B,
                                      double count) {
  const Statistics st = statistics(x, groupSize, eps);
  const double X = st.deviation, M = st.mean, s = st.invstd;
  return {8 * kEps * (X + M) * s * W + 4 * kEps * (X * s * W + B), 16 * kEps * (2 * G * W + X * X * G * W * s * s) * s,
          count * G * s * kEps * (2 * M + 10 * X), 2 * kEps * count * G};
}

std::vector<std::string> stateNames(nn::Module& m) {
  std::vector<std::string> names;
  for (const nn::NamedTensor& t : m.stateDict()) names.push_back(t.name);
  return names;
}

}  // namespace

NN_DEVICE_TEST_CASE("LayerNorm matches hand-computed values", "[LayerNorm]") {
  nn::LayerNorm ln({4}, 0.f);
  REQUIRE(ln.toString() == "nn.LayerNorm([4], eps=0)");
  ln.weight.copy_(Tensor::fromVector({4}, {2, 1, 1, 1}));
  ln.to(kind.device());
  const Tensor x = kind.on(Tensor::fromVector({2, 4}, {1, 1, 3, 3, 0, 4, 0, 4}));
  const Tensor g = kind.on(Tensor::fromVector({2, 4}, {1, 0, 0, 0, 0, 1, 0, 0}));
  // Row 0 holds {1, 1, 3, 3}: mean 2, biased variance 1, invstd 1, normalised {-1, -1, 1, 1}.
  // Row 1 holds {0, 4, 0, 4}: mean 2, biased variance 4, invstd 0.5, normalised {-1, 1, -1, 1}.
  // Times the weight {2, 1, 1, 1}, plus the bias 0.
  REQUIRE(nn::test::maxAbsDiff(ln.forward(x), {-2, -1, 1, 1, -2, 1, -1, 1}) < 1e-6);
  ln.zeroGradParameters();
  ln.backward(x, g);
  // Row 0: gy = g weight = {2, 0, 0, 0}, gsum = 2, dotp = sum (x - mean) gy = -2;
  //   gradInput = (gy - 2/4 - (x - mean) (-2) / 4) invstd = {2 - 0.5 - 0.5, -1, 0, 0}.
  // Row 1: gy = {0, 1, 0, 0}, gsum = 1, dotp = 2, projection = dotp invstd^2 / 4 = 0.125;
  //   gradInput = (gy - 0.25 - {-2, 2, -2, 2} 0.125) 0.5 = {0, 0.25, 0, -0.25}.
  REQUIRE(nn::test::maxAbsDiff(ln.gradInput, {1, -1, 0, 0, 0, 0.25f, 0, -0.25f}) < 1e-6);
  // gradWeight = sum over the rows of g times the normalised value: -1 (row 0), 1 (row 1).
  REQUIRE(nn::test::maxAbsDiff(ln.gradWeight, {-1, 1, 0, 0}) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(ln.gradBias, {1, 1, 0, 0}) < 1e-6);
  // No running statistics: evaluation mode computes the same.
  ln.evaluate();
  REQUIRE(nn::test::maxAbsDiff(ln.forward(x), {-2, -1, 1, 1, -2, 1, -1, 1}) < 1e-6);
}

NN_DEVICE_TEST_CASE("GroupNorm matches hand-computed values", "[GroupNorm]") {
  nn::GroupNorm gn(2, 4, 0.f);
  REQUIRE(gn.toString() == "nn.GroupNorm(2, 4, eps=0)");
  gn.weight.copy_(Tensor::fromVector({4}, {1, 2, 1, 0.5f}));
  gn.bias.copy_(Tensor::fromVector({4}, {0, 1, 0, -1}));
  gn.to(kind.device());
  // One sample of 4 channels of 2 positions: channels {0, 2}, {4, 6} form group 0, {1, 1},
  // {1, 5} group 1. Group 0: mean 3, biased variance (9 + 1 + 1 + 9) / 4 = 5; group 1: mean 2,
  // biased variance (1 + 1 + 1 + 9) / 4 = 3. Each channel's normalised values times its weight
  // plus its bias.
  const Tensor x = kind.on(Tensor::fromVector({1, 4, 2}, {0, 2, 4, 6, 1, 1, 1, 5}));
  const float r5 = std::sqrt(5.f), r3 = std::sqrt(3.f);
  REQUIRE(nn::test::maxAbsDiff(gn.forward(x), {-3 / r5, -1 / r5, 2 / r5 + 1, 6 / r5 + 1, -1 / r3, -1 / r3,
                                               -0.5f / r3 - 1, 1.5f / r3 - 1}) < 1e-6);
  // With gradOutput ones: gradBias is each channel's count of values, gradWeight the sum of its
  // normalised values xhat. gy = g weight is each channel's weight, and gradInput is
  // (gy - mean gy - xhat mean(gy xhat)) invstd over the group: mean gy = 1.5 and 0.75,
  // mean(gy xhat) = (-4 + 2 * 4) / 4 / sqrt 5 = 1 / sqrt 5 and (-2 + 0.5 * 2) / 4 / sqrt 3.
  gn.zeroGradParameters();
  gn.backward(x, kind.on(Tensor::full({1, 4, 2}, 1.f)));
  REQUIRE(nn::test::maxAbsDiff(gn.gradBias, {2, 2, 2, 2}) < 1e-6);
  REQUIRE(nn::test::maxAbsDiff(gn.gradWeight, {-4 / r5, 4 / r5, -2 / r3, 2 / r3}) < 1e-6);
  const float p0 = 1 / r5, p1 = -0.25f / r3;
  REQUIRE(nn::test::maxAbsDiff(
              gn.gradInput,
              {(1 - 1.5f + 3 / r5 * p0) / r5, (1 - 1.5f + 1 / r5 * p0) / r5, (2 - 1.5f - 1 / r5 * p0) / r5,
               (2 - 1.5f - 3 / r5 * p0) / r5, (1 - 0.75f + 1 / r3 * p1) / r3, (1 - 0.75f + 1 / r3 * p1) / r3,
               (0.5f - 0.75f + 1 / r3 * p1) / r3, (0.5f - 0.75f - 3 / r3 * p1) / r3}) < 1e-6);
}

NN_DEVICE_TEST_CASE("LayerNorm and GroupNorm gradients agree with finite differences", "[LayerNorm][GroupNorm]") {
  const auto check = [&](nn::Module& m, const std::vector<int64_t>& sizes, uint64_t seed, size_t parameters) {
    CAPTURE(m.toString(), sizes);
    // A weight away from 1 and a bias away from 0, so that each enters the gradients.
    auto [values, grads] = m.parameters();
    for (size_t k = 0; k < values.size(); ++k) values[k].copy_(nn::test::randomTensor(values[k].sizes(), seed + 1 + k, 0.5f, 1.5f));
    m.to(kind.device());
    const Tensor x = kind.on(nn::test::randomTensor(sizes, seed));
    REQUIRE_THAT(nn::test::checkInputGradient(m, x), nn::test::AgreesWithin(1e-3));
    if (parameters > 0)
      REQUIRE_THAT(nn::test::checkParameterGradients(m, x), nn::test::EachAgreesWithin(1e-3, parameters));
    else
      REQUIRE(m.parameters().first.empty());
  };
  nn::LayerNorm ln({3, 4});
  check(ln, {2, 3, 4}, 31, 2);
  nn::LayerNorm plain({5}, 1e-5f, false);
  check(plain, {3, 2, 5}, 32, 0);
  nn::GroupNorm gn(2, 6);
  check(gn, {2, 6, 3, 2}, 33, 2);
  nn::GroupNorm instance(3, 3, 1e-3f);  // a group per channel: instance normalisation
  check(instance, {4, 3, 5}, 34, 2);
  // A 2-D input: rows of a group's three channels, one position each (two values would
  // normalise to -1 and 1 whatever they are).
  nn::GroupNorm flat(2, 6);
  check(flat, {5, 6}, 36, 2);
  nn::GroupNorm whole(1, 4, 1e-5f, false);
  check(whole, {3, 4, 2}, 35, 0);
}

NN_DEVICE_TEST_CASE("LayerNorm and GroupNorm match PyTorch", "[LayerNorm][GroupNorm]") {
  // tests/reference/NormalizationReference.h: PyTorch's F.layer_norm and F.group_norm of the formulas
  // above. Its sums in another order than ours; both near float's rounding, within 1e-5 of
  // values below 4 in size, and CUDA within normalizationBound more (|g| <= 1.5, weight <= 1.75,
  // |bias| <= 0.25).
  const auto run = [&](nn::Module& m, const std::vector<int64_t>& sizes, int64_t groupSize, double eps, double count,
                       const std::vector<float>& y, const std::vector<float>& gi, const std::vector<float>* gw,
                       const std::vector<float>* gb) {
    CAPTURE(m.toString());
    auto [values, grads] = m.parameters();
    if (!values.empty()) {
      values[0].copy_(referenceWeight(values[0].sizes()));
      values[1].copy_(referenceBias(values[1].sizes()));
    }
    m.to(kind.device());
    const Tensor x = referenceInput(sizes);
    const NormalizationBound bound = normalizationBound(x, groupSize, eps, 1.5, 1.75, 0.25, count);
    const Tensor xOn = kind.on(x);
    REQUIRE(nn::test::maxAbsDiff(m.forward(xOn), y) < 1e-5 + kind.tolerance(bound.output));
    m.zeroGradParameters();
    REQUIRE(nn::test::maxAbsDiff(m.backward(xOn, kind.on(referenceGradOutput(sizes))), gi) <
            1e-5 + kind.tolerance(bound.gradInput));
    if (gw) {
      const auto [v, g] = m.parameters();
      REQUIRE(nn::test::maxAbsDiff(g[0], *gw) < 1e-5 + kind.tolerance(bound.gradWeight));
      REQUIRE(nn::test::maxAbsDiff(g[1], *gb) < 1e-5 + kind.tolerance(bound.gradBias));
    }
  };
  nn::LayerNorm ln({3, 5});
  run(ln, {4, 3, 5}, 15, 1e-5, 4, nn::test::kTorchLayerNorm, nn::test::kTorchLayerNormGradInput,
      &nn::test::kTorchLayerNormGradWeight, &nn::test::kTorchLayerNormGradBias);
  nn::LayerNorm plain({5}, 1e-5f, false);
  run(plain, {2, 3, 5}, 5, 1e-5, 6, nn::test::kTorchLayerNormPlain, nn::test::kTorchLayerNormPlainGradInput, nullptr,
      nullptr);
  nn::GroupNorm gn(3, 6, 1e-3f);
  run(gn, {2, 6, 2, 3}, 12, 1e-3, 12, nn::test::kTorchGroupNorm, nn::test::kTorchGroupNormGradInput,
      &nn::test::kTorchGroupNormGradWeight, &nn::test::kTorchGroupNormGradBias);
  nn::GroupNorm gnPlain(2, 4, 1e-5f, false);
  run(gnPlain, {3, 4}, 2, 1e-5, 3, nn::test::kTorchGroupNormPlain, nn::test::kTorchGroupNormPlainGradInput, nullptr,
      nullptr);
}

NN_DEVICE_TEST_CASE("LayerNorm and GroupNorm reject bad arguments and input with messages naming the module and the shapes",
                    "[LayerNorm][GroupNorm]") {
  REQUIRE_THROWS_WITH(nn::LayerNorm(std::vector<int64_t>{}), Catch::Contains("nn.LayerNorm") && Catch::Contains("none"));
  REQUIRE_THROWS_WITH(nn::LayerNorm({3, 0}), Catch::Contains("nn.LayerNorm") && Catch::Contains("[3, 0]"));
  REQUIRE_THROWS_WITH(nn::LayerNorm({int64_t{1} << 40, int64_t{1} << 40}),
                      Catch::Contains("nn.LayerNorm") && Catch::Contains("[1099511627776, 1099511627776]"));
  REQUIRE_THROWS_WITH(nn::LayerNorm({3}, -1.f), Catch::Contains("nn.LayerNorm([3], eps=-1)") && Catch::Contains("eps"));
  REQUIRE_THROWS_WITH(nn::GroupNorm(4, 6), Catch::Contains("nn.GroupNorm(4, 6)") &&
                                               Catch::Contains("number of channels (6)") &&
                                               Catch::Contains("number of groups (4)"));
  REQUIRE_THROWS_WITH(nn::GroupNorm(0, 6), Catch::Contains("nn.GroupNorm(0, 6)") && Catch::Contains("0 groups"));
  REQUIRE_THROWS_WITH(nn::GroupNorm(2, -2), Catch::Contains("nn.GroupNorm(2, -2)") && Catch::Contains("-2 channels"));

  nn::LayerNorm ln({4, 5});
  ln.to(kind.device());
  REQUIRE_THROWS_WITH(ln.forward(Tensor::zeros({2, 5, 4}, kind.device())),
                      Catch::Contains("nn.LayerNorm([4, 5])") && Catch::Contains("[..., 4, 5]") &&
                          Catch::Contains("[2, 5, 4]"));
  REQUIRE_THROWS_WITH(ln.forward(Tensor::zeros({5}, kind.device())), Catch::Contains("got [5]"));
  nn::GroupNorm gn(2, 6);
  gn.to(kind.device());
  REQUIRE_THROWS_WITH(gn.forward(Tensor::zeros({2, 4, 3}, kind.device())),
                      Catch::Contains("nn.GroupNorm(2, 6)") && Catch::Contains("[N, 6, *]") &&
                          Catch::Contains("[2, 4, 3]"));
  REQUIRE_THROWS_WITH(gn.forward(Tensor::zeros({6}, kind.device())), Catch::Contains("got [6]"));

  const Tensor x = kind.on(nn::test::randomTensor({3, 4, 5}, 41));
  nn::LayerNorm fresh({4, 5});
  fresh.to(kind.device());
  REQUIRE_THROWS_WITH(fresh.backward(x, x), Catch::Contains("nn.LayerNorm([4, 5])") && Catch::Contains("needs a forward"));
  ln.forward(x);
  REQUIRE_THROWS_WITH(ln.backward(x, Tensor::zeros({3, 4, 4}, kind.device())),
                      Catch::Contains("nn.LayerNorm([4, 5])") && Catch::Contains("[3, 4, 5]") &&
                          Catch::Contains("[3, 4, 4]"));
  REQUIRE_THROWS_WITH(ln.forward(x.to(kind.other())),
                      Catch::Contains("nn.LayerNorm([4, 5])") && Catch::Contains(kind.other().str()));
  ln.clearState();  // drops the saved statistics with the output
  REQUIRE_THROWS_WITH(ln.backward(x, x), Catch::Contains("needs a forward"));
}

NN_DEVICE_TEST_CASE("LayerNorm and GroupNorm give the same result for non-contiguous input", "[LayerNorm][GroupNorm]") {
  const auto compare = [&](nn::Module& a, const Tensor& strided) {
    CAPTURE(a.toString());
    REQUIRE_FALSE(strided.isContiguous());
    nn::ModulePtr b = a.clone();
    const Tensor dense = strided.contiguous();
    const Tensor g = kind.on(nn::test::randomTensor(dense.sizes(), 51));
    a.zeroGradParameters();
    b->zeroGradParameters();
    a.forward(strided);
    a.backward(strided, g);
    b->forward(dense);
    b->backward(dense, g);
    REQUIRE(nn::test::maxAbsDiff(a.output, b->output) == 0);
    REQUIRE(nn::test::maxAbsDiff(a.gradInput, b->gradInput) == 0);
    const auto [aValues, aGrads] = a.parameters();
    const auto [bValues, bGrads] = b->parameters();
    for (size_t i = 0; i < aGrads.size(); ++i) REQUIRE(nn::test::maxAbsDiff(aGrads[i], bGrads[i]) == 0);
  };
  nn::LayerNorm ln({6});
  ln.to(kind.device());
  compare(ln, kind.on(nn::test::randomTensor({6, 5}, 52)).transpose(0, 1));
  nn::GroupNorm gn(2, 4);
  gn.to(kind.device());
  compare(gn, nn::test::stridedOn(nn::test::randomTensor({3, 4, 2, 3}, 53), kind.device()));
}

NN_DEVICE_TEST_CASE("LayerNorm and GroupNorm keep their arguments and parameters through clone, save and load",
                    "[LayerNorm][GroupNorm]") {
  nn::LayerNorm ln({2, 3}, 1e-3f);
  ln.weight.copy_(nn::test::randomTensor({2, 3}, 61));
  ln.bias.copy_(nn::test::randomTensor({2, 3}, 62));
  nn::GroupNorm gn(2, 4, 1e-5f, false);
  REQUIRE(ln.toString() == "nn.LayerNorm([2, 3], eps=0.001)");
  REQUIRE(gn.toString() == "nn.GroupNorm(2, 4, affine=false)");
  REQUIRE(nn::LayerNorm({64}).toString() == "nn.LayerNorm([64])");
  REQUIRE(nn::LayerNorm({64}, 1e-5f, false).toString() == "nn.LayerNorm([64], elementwiseAffine=false)");
  REQUIRE(nn::GroupNorm(32, 256).toString() == "nn.GroupNorm(32, 256)");
  // PyTorch's names, so that its state dicts load; weight one and bias zero, as PyTorch's.
  REQUIRE(stateNames(ln) == std::vector<std::string>{"weight", "bias"});
  REQUIRE(stateNames(gn).empty());
  nn::GroupNorm fresh(2, 4);
  REQUIRE(stateNames(fresh) == std::vector<std::string>{"weight", "bias"});
  REQUIRE(nn::test::maxAbsDiff(fresh.weight, {1, 1, 1, 1}) == 0);
  REQUIRE(nn::test::maxAbsDiff(fresh.bias, {0, 0, 0, 0}) == 0);

  const auto roundTrip = [&](nn::Module& m, const std::vector<int64_t>& sizes) {
    const Tensor x = nn::test::randomTensor(sizes, 63);
    m.to(kind.device());
    const std::vector<float> y = m.forward(kind.on(x)).toVector();
    for (const nn::ModulePtr& copy : {m.clone(), nn::test::savedAndLoaded(m)}) {
      REQUIRE(copy->toString() == m.toString());
      copy->to(kind.device());
      REQUIRE(copy->forward(kind.on(x)).toVector() == y);
    }
  };
  roundTrip(ln, {3, 2, 3});
  roundTrip(gn, {2, 4, 3});
  // A clone is independent of the module it was made from.
  nn::ModulePtr twin = ln.clone();
  std::dynamic_pointer_cast<nn::LayerNorm>(twin)->weight.fill_(3);
  REQUIRE(ln.weight.toVector() != std::vector<float>(6, 3.f));
}

TEST_CASE("LayerNorm and GroupNorm give the same floats on any number of compute threads", "[LayerNorm][GroupNorm]") {
  // Rows (and, for the parameter gradients, parameters) are cut among the threads, each done
  // whole by one: the sums run in one order whatever the count.
  const auto passes = [](nn::Module& m, const Tensor& x, const Tensor& g) {
    m.zeroGradParameters();
    std::vector<float> all = m.forward(x).toVector();
    const std::vector<float> gi = m.backward(x, g).toVector();
    all.insert(all.end(), gi.begin(), gi.end());
    for (const Tensor& t : m.parameters().second) {
      const std::vector<float> v = t.toVector();
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  };
  nn::LayerNorm ln({300});
  nn::GroupNorm gn(4, 8);
  const Tensor xl = nn::test::randomTensor({200, 300}, 71), gl = nn::test::randomTensor({200, 300}, 72);
  const Tensor xg = nn::test::randomTensor({16, 8, 30, 30}, 73), gg = nn::test::randomTensor({16, 8, 30, 30}, 74);
  const std::vector<float> layer = passes(ln, xl, gl), group = passes(gn, xg, gg);
  for (int threads : {2, 3}) {
    CAPTURE(threads);
    nn::setNumThreads(threads);
    CHECK(passes(ln, xl, gl) == layer);
    CHECK(passes(gn, xg, gg) == group);
  }
  nn::setNumThreads(1);
}

TEST_CASE("LayerNorm and GroupNorm give the same floats in the AVX-512 and the AVX2 form", "[LayerNorm][GroupNorm]") {
  // The sums add the same lanes in the same order, and nothing is contracted into a fused
  // multiply-add (nn/cpu/Multiversion.h).
  NN_REQUIRE_ISA(nn::cpu::Isa::avx512);
  const auto passes = [](nn::Module& m, const Tensor& x, const Tensor& g) {
    m.zeroGradParameters();
    std::vector<float> all = m.forward(x).toVector();
    const std::vector<float> gi = m.backward(x, g).toVector();
    all.insert(all.end(), gi.begin(), gi.end());
    for (const Tensor& t : m.parameters().second) {
      const std::vector<float> v = t.toVector();
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  };
  nn::LayerNorm ln({77});
  nn::GroupNorm gn(3, 6);
  const Tensor xl = nn::test::randomTensor({9, 77}, 75), gl = nn::test::randomTensor({9, 77}, 76);
  const Tensor xg = nn::test::randomTensor({3, 6, 5, 7}, 77), gg = nn::test::randomTensor({3, 6, 5, 7}, 78);
  const std::vector<float> layer = passes(ln, xl, gl), group = passes(gn, xg, gg);
  const nn::cpu::Isa previous = nn::cpu::setIsa(nn::cpu::Isa::avx2);
  CHECK(passes(ln, xl, gl) == layer);
  CHECK(passes(gn, xg, gg) == group);
  nn::cpu::setIsa(previous);
}

NN_DEVICE_TEST_CASE("LayerNorm and GroupNorm on another device agree with the host's", "[LayerNorm][GroupNorm]") {
  // Rows of 429 values, more than one CUDA block's threads (256), so that each thread sums
  // several; inputs and gradOutputs non-contiguous. |x|, |g| <= 1, weight in [0.5, 1.5), |bias| <= 1.
  const nn::Device device = kind.compared();
  const auto compare = [&](nn::Module& reference, const std::vector<int64_t>& sizes, int64_t groupSize,
                           double count) {
    CAPTURE(reference.toString());
    auto [values, grads] = reference.parameters();
    values[0].copy_(nn::test::randomTensor(values[0].sizes(), 81, 0.5f, 1.5f));
    values[1].copy_(nn::test::randomTensor(values[1].sizes(), 82));
    nn::ModulePtr tested = reference.clone();
    tested->to(device);
    const Tensor x = nn::test::randomTensor(sizes, 83), g = nn::test::randomTensor(sizes, 84);
    const NormalizationBound bound = normalizationBound(x, groupSize, 1e-5, 1, 1.5, 1, count);
    reference.zeroGradParameters();
    tested->zeroGradParameters();
    REQUIRE(nn::test::maxAbsDiff(tested->forward(nn::test::stridedOn(x, device)), reference.forward(x)) <=
            kind.tolerance(bound.output));
    REQUIRE(nn::test::maxAbsDiff(tested->backward(nn::test::stridedOn(x, device), nn::test::stridedOn(g, device)),
                                 reference.backward(x, g)) <= kind.tolerance(bound.gradInput));
    const auto [testedValues, testedGrads] = tested->parameters();
    REQUIRE(nn::test::maxAbsDiff(testedGrads[0], grads[0]) <= kind.tolerance(bound.gradWeight));
    REQUIRE(nn::test::maxAbsDiff(testedGrads[1], grads[1]) <= kind.tolerance(bound.gradBias));
  };
  nn::LayerNorm ln({3, 11, 13});
  compare(ln, {5, 3, 11, 13}, 429, 5);
  nn::GroupNorm gn(2, 6);
  compare(gn, {3, 6, 11, 13}, 429, 3 * 143);
}

NN_DEVICE_TEST_CASE("LayerNorm and GroupNorm allocate nothing in a steady training step", "[LayerNorm][GroupNorm]") {
  nn::LayerNorm ln({4, 4});
  nn::GroupNorm gn(3, 3);
  ln.to(kind.device());
  gn.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({2, 3, 4, 4}, 91));
  const Tensor g = kind.on(nn::test::randomTensor({2, 3, 4, 4}, 92));
  for (nn::Module* m : {static_cast<nn::Module*>(&ln), static_cast<nn::Module*>(&gn)}) {
    m->forward(x);
    m->backward(x, g);
    const int64_t before = nn::storageAllocationCount();
    m->forward(x);
    m->backward(x, g);
    REQUIRE(nn::storageAllocationCount() == before);
  }
}
