// nn::SoftMax and nn::LogSoftMax: reference values on every supported rank, gradient checks,
// errors and PyTorch cross-checks on every device type, and the modules on another device
// compared with those on the host.
//
// On CUDA devices both modules run through cuDNN, whose results may differ from the CPU's by
// the bounds of softMaxBound below; a reference value that the CPU meets within t, CUDA meets
// within t plus that bound.
#include "nn/modules/SoftMax.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>

#include "nn/modules/LogSoftMax.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/reference/SoftMaxReference.h"

using nn::Tensor;

namespace {

constexpr double kEps = 1.0 / (1 << 24);  // half the spacing of floats in [1, 2)

std::vector<float> logOf(std::vector<float> v) {
  for (float& x : v) x = std::log(x);
  return v;
}

double maxAbs(const Tensor& t) {
  double largest = 0;
  for (float x : t.toVector()) largest = std::max(largest, std::fabs(double(x)));
  return largest;
}

// How far cuDNN's forward and backward may lie from the CPU module's, element by element, for
// `classes` classes, inputs with |x - max| <= 10, gradOutputs in [-1, 1), and outputs of at
// most `largest` in size.
//
// The exps: the CPU's expf is within 1 ulp; cuDNN's may be the fast one, within
// 2 + 1.17 |x - max| <= 14 ulp: 16 ulp = 32 kEps relative, taken for both.
// Each side sums C terms in its own order, (C - 1) kEps relative each.
//   softmax y = e / sum, y <= 1:   2 * 32 + 2 C + 2 divisions  -> (2C + 70) kEps
//   log-softmax (x - max) - log(sum): log sum off by (32 + C) kEps, plus the roundings
//   of log and of the subtraction, a few kEps of |y|          -> (C + 40) + 4 |y| kEps
// Backward, with the forward's differences carried in:
//   softmax y (g - sum g y): sum g y off by the forward's difference plus C kEps, and
//   y (<= 1) times it; 3 x the forward's tolerance + (C + 4) kEps
//   log-softmax g - exp(y) sum g: exp(y) off by the forward's tolerance plus 32 kEps,
//   times |sum g| <= C; sum g off by C^2 kEps; the subtraction 2 (C + 1) kEps.
struct SoftMaxBound {
  double forward, backward;
};
SoftMaxBound softMaxBound(bool log, double classes, double largest) {
  const double forward = log ? (classes + 40 + 4 * largest) * kEps : (2 * classes + 70) * kEps;
  const double backward = log ? (forward + 32 * kEps) * classes + (classes * classes + 2 * (classes + 1)) * kEps
                              : 3 * forward + (classes + 4) * kEps;
  return {forward, backward};
}

}  // namespace

NN_DEVICE_TEST_CASE("SoftMax and LogSoftMax of a vector match hand-computed values", "[SoftMax][LogSoftMax]") {
  // exp([0, ln 2, ln 3]) = [1, 2, 3], sum 6: softmax [1/6, 1/3, 1/2], log-softmax its log.
  const Tensor x = kind.on(Tensor::fromVector({3}, {0.f, std::log(2.f), std::log(3.f)}));
  const std::vector<float> y{1.f / 6, 1.f / 3, 1.f / 2};
  nn::SoftMax softMax;
  nn::LogSoftMax logSoftMax;
  // 3 classes, outputs below ln 6 < 2 in size.
  const SoftMaxBound plain = softMaxBound(false, 3, 1), log = softMaxBound(true, 3, 2);
  REQUIRE(nn::test::maxAbsDiff(softMax.forward(x), y) < 1e-6 + kind.tolerance(plain.forward));
  REQUIRE(nn::test::maxAbsDiff(logSoftMax.forward(x), logOf(y)) < 1e-6 + kind.tolerance(log.forward));
  const Tensor g = kind.on(Tensor::fromVector({3}, {1, 0, 0}));
  // softmax: y (g - sum g y) with sum g y = 1/6: [1/6 * 5/6, 1/3 * -1/6, 1/2 * -1/6].
  REQUIRE(nn::test::maxAbsDiff(softMax.backward(x, g), {5.f / 36, -1.f / 18, -1.f / 12}) <
          1e-6 + kind.tolerance(plain.backward));
  // log-softmax: g - exp(y) sum g with sum g = 1: [1 - 1/6, -1/3, -1/2].
  REQUIRE(nn::test::maxAbsDiff(logSoftMax.backward(x, g), {5.f / 6, -1.f / 3, -1.f / 2}) <
          1e-6 + kind.tolerance(log.backward));
}

NN_DEVICE_TEST_CASE("SoftMax and LogSoftMax subtract the max, so huge inputs stay finite", "[SoftMax][LogSoftMax]") {
  // Rows [1000, 1001] and [-1000, -1001]: exp overflows or underflows without the shift; with
  // it, the rows are [1, e] / (1 + e) and [e, 1] / (1 + e), and log(1 + e) = 1.31326169.
  const Tensor x = kind.on(Tensor::fromVector({2, 2}, {1000.f, 1001.f, -1000.f, -1001.f}));
  nn::SoftMax softMax;
  nn::LogSoftMax logSoftMax;
  REQUIRE(nn::test::maxAbsDiff(softMax.forward(x), {0.26894142f, 0.73105858f, 0.73105858f, 0.26894142f}) <
          1e-6 + kind.tolerance(softMaxBound(false, 2, 1).forward));
  REQUIRE(nn::test::maxAbsDiff(logSoftMax.forward(x), {-1.31326169f, -0.31326169f, -0.31326169f, -1.31326169f}) <
          1e-6 + kind.tolerance(softMaxBound(true, 2, 2).forward));
}

NN_DEVICE_TEST_CASE("SoftMax normalises over Torch7's dimension for each rank", "[SoftMax][LogSoftMax]") {
  nn::SoftMax softMax;
  nn::LogSoftMax logSoftMax;
  const float l3 = std::log(3.f);
  // 2 classes, log-probabilities above ln 1/4 > -2.
  const double plain = 1e-6 + kind.tolerance(softMaxBound(false, 2, 1).forward);
  const double log = 1e-6 + kind.tolerance(softMaxBound(true, 2, 2).forward);
  SECTION("2-D [N, C]: over C, row by row") {
    // Row 1 = exp [1, 3] / 4; row 2 = exp [1, 1] / 2.
    const Tensor x = kind.on(Tensor::fromVector({2, 2}, {0, l3, 5, 5}));
    REQUIRE(nn::test::maxAbsDiff(softMax.forward(x), {0.25f, 0.75f, 0.5f, 0.5f}) < plain);
    REQUIRE(nn::test::maxAbsDiff(logSoftMax.forward(x), logOf({0.25f, 0.75f, 0.5f, 0.5f})) < log);
  }
  SECTION("3-D [C, H, W]: over dimension 0, at each pixel") {
    // [2, 1, 2]: plane 0 = [0, ln 3], plane 1 = [ln 3, 0]. Pixel 0 has values [0, ln 3] across
    // the planes -> [1/4, 3/4]; pixel 1 has [ln 3, 0] -> [3/4, 1/4].
    const Tensor x = kind.on(Tensor::fromVector({2, 1, 2}, {0, l3, l3, 0}));
    REQUIRE(nn::test::maxAbsDiff(softMax.forward(x), {0.25f, 0.75f, 0.75f, 0.25f}) < plain);
    REQUIRE(nn::test::maxAbsDiff(logSoftMax.forward(x), logOf({0.25f, 0.75f, 0.75f, 0.25f})) < log);
  }
  SECTION("4-D [N, C, H, W]: over dimension 1, at each pixel of each sample") {
    // [2, 2, 1, 2]: sample 0 as in the 3-D case; sample 1 has planes [0, 0] and [ln 3, ln 3],
    // so both its pixels give [1/4, 3/4].
    const Tensor x = kind.on(Tensor::fromVector({2, 2, 1, 2}, {0, l3, l3, 0, 0, 0, l3, l3}));
    const std::vector<float> y{0.25f, 0.75f, 0.75f, 0.25f, 0.25f, 0.25f, 0.75f, 0.75f};
    REQUIRE(nn::test::maxAbsDiff(softMax.forward(x), y) < plain);
    REQUIRE(nn::test::maxAbsDiff(logSoftMax.forward(x), logOf(y)) < log);
  }
}

NN_DEVICE_TEST_CASE("SoftMax and LogSoftMax gradients agree with finite differences", "[SoftMax][LogSoftMax]") {
  nn::SoftMax softMax;
  nn::LogSoftMax logSoftMax;
  for (const std::vector<int64_t>& sizes : std::vector<std::vector<int64_t>>{{5}, {3, 4}, {3, 2, 3}, {2, 3, 2, 2}}) {
    const Tensor x = kind.on(nn::test::randomTensor(sizes, 3, -2, 2));
    INFO("input " << x.shapeString());
    REQUIRE_THAT(nn::test::checkInputGradient(softMax, x), nn::test::AgreesWithin(1e-3));
    REQUIRE_THAT(nn::test::checkInputGradient(logSoftMax, x), nn::test::AgreesWithin(1e-3));
  }
  REQUIRE(softMax.parameters().first.empty());
}

NN_DEVICE_TEST_CASE("SoftMax and LogSoftMax reject other ranks and wrong gradOutputs, naming themselves",
                    "[SoftMax][LogSoftMax]") {
  const nn::Device device = kind.device();
  nn::SoftMax softMax;
  nn::LogSoftMax logSoftMax;
  REQUIRE_THROWS_WITH(softMax.forward(Tensor::zeros({2, 1, 2, 2, 2}, device)), Catch::Contains("nn.SoftMax") &&
                                                                                   Catch::Contains("[N, C, H, W]") &&
                                                                                   Catch::Contains("[2, 1, 2, 2, 2]"));
  REQUIRE_THROWS_WITH(logSoftMax.forward(Tensor::zeros({1, 1, 1, 1, 1}, device)),
                      Catch::Contains("nn.LogSoftMax") && Catch::Contains("[1, 1, 1, 1, 1]"));
  const Tensor x = Tensor::zeros({2, 3}, device);
  softMax.forward(x);
  logSoftMax.forward(x);
  REQUIRE_THROWS_WITH(softMax.backward(x, Tensor::zeros({2, 4}, device)),
                      Catch::Contains("nn.SoftMax") && Catch::Contains("[2, 3]") && Catch::Contains("[2, 4]"));
  REQUIRE_THROWS_WITH(logSoftMax.backward(x, Tensor::zeros({3, 2}, device)),
                      Catch::Contains("nn.LogSoftMax") && Catch::Contains("[2, 3]") && Catch::Contains("[3, 2]"));
  // A backward on an input of another size than the forward's.
  REQUIRE_THROWS_WITH(softMax.backward(Tensor::zeros({3, 3}, device), Tensor::zeros({3, 3}, device)),
                      Catch::Contains("nn.SoftMax") && Catch::Contains("[3, 3]") && Catch::Contains("[2, 3]"));
}

NN_DEVICE_TEST_CASE("SoftMax and LogSoftMax give the same result for a strided input and its contiguous copy",
                    "[SoftMax][LogSoftMax]") {
  // [2, 3, 2, 2] with the planes and a spatial dimension swapped in memory.
  const Tensor strided = kind.on(nn::test::randomTensor({2, 2, 2, 3}, 4, -3, 3)).transpose(1, 3);
  REQUIRE_FALSE(strided.isContiguous());
  const Tensor copy = strided.contiguous();
  const Tensor g = kind.on(nn::test::randomTensor({2, 3, 2, 2}, 5));
  const Tensor stridedG = kind.on(nn::test::randomTensor({2, 2, 2, 3}, 5)).transpose(1, 3);
  const Tensor gCopy = stridedG.contiguous();
  nn::SoftMax a, b;
  nn::LogSoftMax c, d;
  REQUIRE(nn::test::maxAbsDiff(a.forward(strided), b.forward(copy)) == 0);
  REQUIRE(nn::test::maxAbsDiff(a.backward(strided, stridedG), b.backward(copy, gCopy)) == 0);
  REQUIRE(nn::test::maxAbsDiff(c.forward(strided), d.forward(copy)) == 0);
  REQUIRE(nn::test::maxAbsDiff(c.backward(strided, g), d.backward(copy, g)) == 0);
}

NN_DEVICE_TEST_CASE("SoftMax and LogSoftMax clones are independent and compute the same", "[SoftMax][LogSoftMax]") {
  const Tensor x = kind.on(nn::test::randomTensor({3, 4}, 8));
  const Tensor other = kind.on(nn::test::randomTensor({2, 2, 2}, 9));
  for (nn::ModulePtr m :
       {nn::ModulePtr(std::make_shared<nn::SoftMax>()), nn::ModulePtr(std::make_shared<nn::LogSoftMax>())}) {
    const std::vector<float> out = m->forward(x).toVector();
    nn::ModulePtr copy = m->clone();
    REQUIRE(copy->toString() == m->toString());
    REQUIRE(copy->forward(x).toVector() == out);
    copy->forward(other);
    REQUIRE(m->output.toVector() == out);
  }
}

// Expected values: PyTorch 1.13 in float64, torch.softmax / torch.log_softmax over the same
// dimension, then backward(gradOutput), on the inputs below regenerated in Python from
// std::mt19937 as nn::test::randomTensor draws them.
NN_DEVICE_TEST_CASE("SoftMax over the planes of a 4-D input matches PyTorch", "[SoftMax]") {
  const Tensor x = kind.on(nn::test::randomTensor({2, 3, 2, 2}, 31, -4, 4));
  const Tensor g = kind.on(nn::test::randomTensor({2, 3, 2, 2}, 32));
  const SoftMaxBound bound = softMaxBound(false, 3, 1);
  nn::SoftMax softMax;
  REQUIRE(nn::test::maxAbsDiff(softMax.forward(x),
                               {0.02013112f, 0.008395573f, 0.4424489f,   0.06753046f, 0.969073f,     0.8864795f,
                                0.5569305f,  0.9026196f,   0.01079583f,  0.1051249f,  0.0006205287f, 0.02984996f,
                                0.9973041f,  0.4914694f,   0.01725046f,  0.9480941f,  0.001272174f,  0.2558768f,
                                0.7704757f,  0.001300078f, 0.001423706f, 0.2526538f,  0.2122738f,    0.05060585f}) <
          1e-6 + kind.tolerance(bound.forward));
  REQUIRE(
      nn::test::maxAbsDiff(softMax.backward(x, g),
                           {0.01190496f,   -0.00521618f, -0.2875346f,    -0.04031855f, -0.01565038f,  -0.07077497f,
                            0.2873874f,    0.06216621f,  0.003745416f,   0.07599115f,  0.0001471381f, -0.02184767f,
                            -0.001262685f, 0.02562624f,  0.01309542f,    -0.0040266f,  0.001290976f,  0.1719973f,
                            0.07339958f,   0.001403248f, -2.829042e-05f, -0.1976236f,  -0.086495f,    0.002623351f}) <
      1e-6 + kind.tolerance(bound.backward));
}

NN_DEVICE_TEST_CASE("LogSoftMax over dimension 0 of a 3-D input matches PyTorch", "[LogSoftMax]") {
  const Tensor x = kind.on(nn::test::randomTensor({3, 2, 4}, 33, -4, 4));
  const Tensor g = kind.on(nn::test::randomTensor({3, 2, 4}, 34));
  nn::LogSoftMax logSoftMax;
  // 3 classes; the outputs reach -7.6, so |y| < 8.
  const SoftMaxBound bound = softMaxBound(true, 3, 8);
  REQUIRE(nn::test::maxAbsDiff(logSoftMax.forward(x),
                               {-5.17861f,  -0.9697083f, -0.900326f,   -1.590758f,  -4.445014f, -0.4535458f,
                                -5.558762f, -7.239792f,  -0.2035254f,  -0.4797796f, -3.01981f,  -2.041356f,
                                -7.575249f, -1.015381f,  -0.01514382f, -1.080826f,  -1.723084f, -6.272995f,
                                -0.607424f, -0.4059006f, -0.01232559f, -6.047287f,  -4.49397f,  -0.4155648f}) <
          1e-5 + kind.tolerance(bound.forward));
  REQUIRE(nn::test::maxAbsDiff(logSoftMax.backward(x, g),
                               {-0.9087017f, -0.3103174f,  0.04720926f, -0.330818f,  -0.7918863f, -0.1705272f,
                                0.2655198f,  -0.1047683f,  1.079777f,   -0.3102869f, 0.81071f,    0.4090934f,
                                -0.1458589f, -0.324643f,   -0.5616952f, -0.3223742f, -0.1710756f, 0.6206043f,
                                -0.8579192f, -0.07827535f, 0.9377451f,  0.4951702f,  0.2961754f,  0.4271425f}) <
          1e-5 + kind.tolerance(bound.backward));
}

NN_DEVICE_TEST_CASE("SoftMax and LogSoftMax match PyTorch on a [4, 10, 3, 5] input", "[SoftMax][LogSoftMax]") {
  // Every element of both outputs and both input gradients against PyTorch 1.13's, from
  // tests/reference/SoftMaxReference.h (tests/reference/make_softmax_reference.py). Inputs: x[i] = 5 sin(0.37 i),
  // gradOutput[i] = cos(0.11 i). The CPU's loops and PyTorch's round differently in the last
  // bits of each sum; on CUDA each element may differ from the CPU's by softMaxBound (10
  // classes, |x - max| <= 10, outputs of log-softmax above -15).
  std::vector<float> xs(600), gs(600);
  for (size_t i = 0; i < xs.size(); ++i) {
    xs[i] = static_cast<float>(5 * std::sin(0.37 * static_cast<double>(i)));
    gs[i] = static_cast<float>(std::cos(0.11 * static_cast<double>(i)));
  }
  const Tensor x = kind.on(Tensor::fromVector({4, 10, 3, 5}, xs));
  const Tensor g = kind.on(Tensor::fromVector({4, 10, 3, 5}, gs));
  const SoftMaxBound plain = softMaxBound(false, 10, 1), log = softMaxBound(true, 10, 15);
  auto requireClose = [&](const Tensor& got, const std::vector<float>& want, double bound) {
    const std::vector<float> v = got.toVector();
    REQUIRE(v.size() == want.size());
    for (size_t i = 0; i < v.size(); ++i) {
      CAPTURE(i, v[i], want[i]);
      REQUIRE(std::fabs(double(v[i]) - want[i]) <= 1e-6 * std::max(1.0, std::fabs(double(want[i]))) + bound);
    }
  };
  nn::SoftMax softMax;
  requireClose(softMax.forward(x), nn::test::kTorchSoftMax, kind.tolerance(plain.forward));
  requireClose(softMax.backward(x, g), nn::test::kTorchSoftMaxGradInput, kind.tolerance(plain.backward));
  nn::LogSoftMax logSoftMax;
  requireClose(logSoftMax.forward(x), nn::test::kTorchLogSoftMax, kind.tolerance(log.forward));
  requireClose(logSoftMax.backward(x, g), nn::test::kTorchLogSoftMaxGradInput, kind.tolerance(log.backward));
}

NN_DEVICE_TEST_CASE("SoftMax and LogSoftMax on another device agree with the host modules", "[SoftMax][LogSoftMax]") {
  // Every rank, the class dimension odd and, from 3-D on, inner positions; inputs and
  // gradOutputs non-contiguous on the compared device. cuDNN within softMaxBound (|x| <= 4).
  const std::vector<std::vector<int64_t>> shapes{{13}, {7, 13}, {5, 7, 3}, {3, 5, 4, 3}};
  for (const std::vector<int64_t>& sizes : shapes) {
    CAPTURE(sizes);
    const double classes = static_cast<double>(sizes.size() <= 2 ? sizes.back() : sizes[sizes.size() - 3]);
    const Tensor x = nn::test::randomTensor(sizes, 71, -4, 4);
    const Tensor g = nn::test::randomTensor(sizes, 72);
    for (bool log : {false, true}) {
      CAPTURE(log);
      std::shared_ptr<nn::Module> reference, tested;
      if (log) {
        reference = std::make_shared<nn::LogSoftMax>();
        tested = std::make_shared<nn::LogSoftMax>();
      } else {
        reference = std::make_shared<nn::SoftMax>();
        tested = std::make_shared<nn::SoftMax>();
      }
      const Tensor y = reference->forward(x).clone();
      const Tensor& yOn = tested->forward(nn::test::stridedOn(x, kind.compared()));
      REQUIRE(yOn.device() == kind.compared());
      const Tensor gi = reference->backward(x, g).clone();
      const Tensor giOn =
          tested->backward(nn::test::stridedOn(x, kind.compared()), nn::test::stridedOn(g, kind.compared())).clone();
      const SoftMaxBound bound = softMaxBound(log, classes, maxAbs(y));
      REQUIRE(nn::test::maxAbsDiff(tested->output, y) <= kind.tolerance(bound.forward));
      REQUIRE(nn::test::maxAbsDiff(giOn, gi) <= kind.tolerance(bound.backward));
    }
  }
}
