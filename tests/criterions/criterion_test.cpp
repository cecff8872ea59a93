// nn::ClassNLLCriterion, nn::MSECriterion and nn::CrossEntropyCriterion: reference values,
// gradient checks, bad input, strided input and PyTorch 1.13 cross-checks on every device
// type, and the criterions on another device compared with those on the host.
//
// The losses are sums in double on every device, in another order on CUDA: they differ from
// the CPU's by at most batch 2^-53 times the sum of |terms|, far below a float's ulp here, and
// the rounding to float adds 1 ulp (2 kEps relative, lossBound). Where the CPU meets a
// reference value within t, CUDA meets it within t plus the bound of its difference from the
// CPU, derived next to the comparison at the end of this file.
#include <catch2/catch.hpp>
#include <cmath>

#include "nn/criterions/ClassNLLCriterion.h"
#include "nn/criterions/CrossEntropyCriterion.h"
#include "nn/criterions/MSECriterion.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

constexpr double kEps = 1.0 / (1 << 24);  // half the spacing of floats in [1, 2)

// How far a loss summed in double and rounded to float may lie from the CPU's on CUDA.
double lossBound(double loss) { return 2 * kEps * std::fabs(loss) + kEps; }

// How far CrossEntropyCriterion's loss of each row and its gradient, through CUDA's expf
// (2 ulp) and logf (1 ulp) against the host's (1 ulp each), may lie from the CPU's, for
// `classes` classes: the sum of exps off by 6 kEps relative, its log by 6 kEps plus 2 ulp of
// log(sum) <= log(C); the gradient softmax - onehot an exp of an argument off by that much,
// plus 6 kEps, of a probability <= 1, and the subtraction; times the norm <= 1.
double crossEntropyRowBound(double classes) { return (6 + 4 * std::log(classes)) * kEps; }
double crossEntropyGradientBound(double classes) { return (14 + 4 * std::log(classes)) * kEps; }

// The inputs of the PyTorch 1.13 script whose results the cross-checks below commit:
//   scores: x[i] = scale * sin(0.37 i) * (1 + i % 4) + shift over the flat index i
//   labels: t[i] = (3 i + 1) % classes
//   targets of MSE: t[i] = cos(0.23 i)
Tensor scores(const std::vector<int64_t>& sizes, float scale = 1, float shift = 0) {
  std::vector<float> v(nn::product(sizes));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(scale * std::sin(0.37 * static_cast<double>(i)) * (1 + i % 4) + shift);
  return Tensor::fromVector(sizes, v);
}

Tensor labels(int64_t batch, int64_t classes) {
  std::vector<float> v(batch);
  for (int64_t i = 0; i < batch; ++i) v[i] = static_cast<float>((3 * i + 1) % classes);
  return Tensor::fromVector({batch}, v);
}

Tensor cosines(const std::vector<int64_t>& sizes) {
  std::vector<float> v(nn::product(sizes));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::cos(0.23 * static_cast<double>(i)));
  return Tensor::fromVector(sizes, v);
}

// Row-wise log-softmax in double, to feed ClassNLLCriterion independently of the code under test.
Tensor logSoftMax(const Tensor& x) {
  const int64_t rows = x.size(0), cols = x.size(1);
  const std::vector<float> v = x.toVector();
  std::vector<float> out(v.size());
  for (int64_t i = 0; i < rows; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += std::exp(static_cast<double>(v[i * cols + j]));
    for (int64_t j = 0; j < cols; ++j) out[i * cols + j] = static_cast<float>(v[i * cols + j] - std::log(sum));
  }
  return Tensor::fromVector({rows, cols}, out);
}

}  // namespace

// ClassNLLCriterion

// ClassNLLCriterion

NN_DEVICE_TEST_CASE("ClassNLLCriterion matches hand-computed values", "[ClassNLLCriterion]") {
  nn::ClassNLLCriterion nll;
  const Tensor x = kind.on(Tensor::fromVector({2, 3}, {-1, -2, -3, -0.5f, -1.5f, -2.5f}));
  const Tensor t = kind.on(Tensor::fromVector({2}, {2, 0}));
  // -(x[0][2] + x[1][0]) / 2 = (3 + 0.5) / 2; the gradient is -1/2 at each target.
  REQUIRE(nll.forward(x, t) == Approx(1.75f));
  REQUIRE(nn::test::maxAbsDiff(nll.backward(x, t), {0, 0, -0.5f, -0.5f, 0, 0}) == 0);
  nn::ClassNLLCriterion summed(false);
  REQUIRE(summed.forward(x, t) == Approx(3.5f));
  REQUIRE(nn::test::maxAbsDiff(summed.backward(x, t), {0, 0, -1, -1, 0, 0}) == 0);
  // A 1-D input is one sample.
  const Tensor row = kind.on(Tensor::fromVector({3}, {-1, -2, -3}));
  const Tensor one = kind.on(Tensor::fromVector({1}, {1}));
  REQUIRE(nll.forward(row, one) == Approx(2));
  REQUIRE(nn::test::maxAbsDiff(nll.backward(row, one), {0, -1, 0}) == 0);
}

NN_DEVICE_TEST_CASE("ClassNLLCriterion gradient agrees with finite differences", "[ClassNLLCriterion]") {
  const Tensor x = kind.on(scores({4, 5})), t = kind.on(labels(4, 5));
  nn::ClassNLLCriterion nll;
  REQUIRE_THAT(nn::test::checkCriterionGradient(nll, x, t), nn::test::AgreesWithin(1e-3));
  nn::ClassNLLCriterion summed(false);
  REQUIRE_THAT(nn::test::checkCriterionGradient(summed, x, t), nn::test::AgreesWithin(1e-3));
}

NN_DEVICE_TEST_CASE("ClassNLLCriterion rejects bad input naming the criterion, shapes and targets",
                    "[ClassNLLCriterion]") {
  // Targets on a CUDA device are checked there: the same errors as on the CPU, thrown when the
  // host next waits for the device (the loss's read, or here the gradient's).
  nn::ClassNLLCriterion nll;
  const Tensor x = Tensor::zeros({2, 3}, kind.device());
  REQUIRE_THROWS_WITH(nll.forward(x, kind.on(Tensor::fromVector({3}, {0, 1, 2}))),
                      Catch::Contains("nn.ClassNLLCriterion") && Catch::Contains("[2]") && Catch::Contains("[2, 3]") &&
                          Catch::Contains("[3]"));
  REQUIRE_THROWS_WITH(nll.forward(Tensor::zeros({2, 3, 4}, kind.device()), Tensor::zeros({2}, kind.device())),
                      Catch::Contains("nn.ClassNLLCriterion") && Catch::Contains("[2, 3, 4]"));
  REQUIRE_THROWS_WITH(
      nll.forward(x, kind.on(Tensor::fromVector({2}, {0, 3}))),
      Catch::Contains("nn.ClassNLLCriterion") && Catch::Contains("target 3") && Catch::Contains("position 1"));
  REQUIRE_THROWS_WITH(nll.backward(x, kind.on(Tensor::fromVector({2}, {-1, 0}))).toVector(),
                      Catch::Contains("target -1") && Catch::Contains("position 0"));
  REQUIRE_THROWS_WITH(nll.forward(x, kind.on(Tensor::fromVector({2}, {0, 1.5f}))),
                      Catch::Contains("target 1.5") && Catch::Contains("position 1"));
  REQUIRE_THROWS_WITH(nll.forward(x, Tensor::zeros({2}, kind.other())),
                      Catch::Contains("nn.ClassNLLCriterion") && Catch::Contains(kind.other().str()));
}

NN_DEVICE_TEST_CASE("ClassNLLCriterion gives the same result for strided input", "[ClassNLLCriterion]") {
  nn::ClassNLLCriterion nll;
  const Tensor strided = kind.on(scores({5, 4})).transpose(0, 1);
  const Tensor dense = strided.contiguous();
  const Tensor t = kind.on(labels(4, 5));
  REQUIRE(nll.forward(strided, t) == nll.forward(dense, t));
  const Tensor g = nll.backward(dense, t).clone();
  REQUIRE(nn::test::maxAbsDiff(nll.backward(strided, t), g) == 0);
}

NN_DEVICE_TEST_CASE("ClassNLLCriterion matches PyTorch 1.13", "[ClassNLLCriterion]") {
  // torch.nn.functional.nll_loss(scores(3, 0) as [6, 10], labels(6, 10)), mean and sum.
  const Tensor x = kind.on(scores({6, 10}, 3)), t = kind.on(labels(6, 10));
  nn::ClassNLLCriterion nll;
  REQUIRE(nll.forward(x, t) == Approx(3.46400142).epsilon(1e-6).margin(kind.tolerance(lossBound(3.47))));
  nn::ClassNLLCriterion summed(false);
  REQUIRE(summed.forward(x, t) == Approx(20.784008).epsilon(1e-6).margin(kind.tolerance(lossBound(20.8))));
}

// MSECriterion

NN_DEVICE_TEST_CASE("MSECriterion matches hand-computed values", "[MSECriterion]") {
  const Tensor x = kind.on(Tensor::fromVector({2, 2}, {1, 2, 3, 4}));
  const Tensor t = kind.on(Tensor::fromVector({2, 2}, {0, 2, 5, 4}));
  // Differences {1, 0, -2, 0}: squares sum to 5, over 4 elements 1.25; gradient 2 d / 4.
  nn::MSECriterion mse;
  REQUIRE(mse.forward(x, t) == Approx(1.25f));
  REQUIRE(nn::test::maxAbsDiff(mse.backward(x, t), {0.5f, 0, -1, 0}) == 0);
  nn::MSECriterion summed(false);
  REQUIRE(summed.forward(x, t) == Approx(5));
  REQUIRE(nn::test::maxAbsDiff(summed.backward(x, t), {2, 0, -4, 0}) == 0);
}

NN_DEVICE_TEST_CASE("MSECriterion gradient agrees with finite differences", "[MSECriterion]") {
  nn::MSECriterion mse;
  REQUIRE_THAT(nn::test::checkCriterionGradient(mse, kind.on(scores({3, 2, 4})), kind.on(cosines({3, 2, 4}))),
               nn::test::AgreesWithin(1e-3));
  nn::MSECriterion summed(false);
  REQUIRE_THAT(nn::test::checkCriterionGradient(summed, kind.on(scores({7})), kind.on(cosines({7}))),
               nn::test::AgreesWithin(1e-3));
}

NN_DEVICE_TEST_CASE("MSECriterion rejects bad input naming the criterion and shapes", "[MSECriterion]") {
  const nn::Device device = kind.device();
  nn::MSECriterion mse;
  REQUIRE_THROWS_WITH(mse.forward(Tensor::zeros({2, 3}, device), Tensor::zeros({3, 2}, device)),
                      Catch::Contains("nn.MSECriterion") && Catch::Contains("[2, 3]") && Catch::Contains("[3, 2]"));
  // No broadcasting, even where the element counts agree.
  REQUIRE_THROWS_WITH(mse.backward(Tensor::zeros({6}, device), Tensor::zeros({2, 3}, device)),
                      Catch::Contains("nn.MSECriterion") && Catch::Contains("[6]") && Catch::Contains("[2, 3]"));
  REQUIRE_THROWS_WITH(mse.forward(Tensor::zeros({0}, device), Tensor::zeros({0}, device)),
                      Catch::Contains("nn.MSECriterion") && Catch::Contains("non-empty"));
  REQUIRE_THROWS_WITH(mse.forward(Tensor::zeros({2}, device), Tensor::zeros({2}, kind.other())),
                      Catch::Contains("nn.MSECriterion") && Catch::Contains(kind.other().str()));
}

NN_DEVICE_TEST_CASE("MSECriterion gives the same result for strided input and target", "[MSECriterion]") {
  nn::MSECriterion mse;
  const Tensor x = kind.on(scores({6, 4})).narrow(1, 1, 2);
  const Tensor t = kind.on(cosines({2, 6})).transpose(0, 1);
  REQUIRE_FALSE(x.isContiguous());
  REQUIRE(mse.forward(x, t) == mse.forward(x.contiguous(), t.contiguous()));
  const Tensor g = mse.backward(x.contiguous(), t.contiguous()).clone();
  REQUIRE(nn::test::maxAbsDiff(mse.backward(x, t), g) == 0);
}

NN_DEVICE_TEST_CASE("MSECriterion matches PyTorch 1.13", "[MSECriterion]") {
  // torch.nn.functional.mse_loss(scores(1, 0) as [5, 7], cosines as [5, 7]), mean and sum.
  const Tensor x = kind.on(scores({5, 7})), t = kind.on(cosines({5, 7}));
  nn::MSECriterion mse;
  REQUIRE(mse.forward(x, t) == Approx(3.5619607).epsilon(1e-6).margin(kind.tolerance(lossBound(3.57))));
  nn::MSECriterion summed(false);
  REQUIRE(summed.forward(x, t) == Approx(124.668625).epsilon(1e-6).margin(kind.tolerance(lossBound(124.7))));
}

// CrossEntropyCriterion

NN_DEVICE_TEST_CASE("CrossEntropyCriterion matches hand-computed values, also for large scores",
                    "[CrossEntropyCriterion]") {
  const float ln2 = std::log(2.f), ln3 = std::log(3.f);
  // Row 0: exp of {0, 0, ln 2} sums to 4; the loss of target 2 is ln 4 - ln 2 = ln 2 and the
  // softmax is {1/4, 1/4, 1/2}. Row 1: three equal scores of 1000, whose exp overflows a
  // float: the loss of target 0 is ln 3 and the softmax 1/3 each.
  const Tensor x = kind.on(Tensor::fromVector({2, 3}, {0, 0, ln2, 1000, 1000, 1000}));
  const Tensor t = kind.on(Tensor::fromVector({2}, {2, 0}));
  const double gradient = 1e-6 + kind.tolerance(crossEntropyGradientBound(3));
  nn::CrossEntropyCriterion ce;
  REQUIRE(ce.forward(x, t) == Approx((ln2 + ln3) / 2));
  // (softmax - onehot) / 2
  REQUIRE(nn::test::maxAbsDiff(ce.backward(x, t), {0.125f, 0.125f, -0.25f, -1.f / 3, 1.f / 6, 1.f / 6}) < gradient);
  nn::CrossEntropyCriterion summed(false);
  REQUIRE(summed.forward(x, t) == Approx(ln2 + ln3));
  REQUIRE(nn::test::maxAbsDiff(summed.backward(x, t), {0.25f, 0.25f, -0.5f, -2.f / 3, 1.f / 3, 1.f / 3}) < gradient);
  // A 1-D input is one sample.
  const Tensor row = kind.on(Tensor::fromVector({3}, {0, 0, ln2}));
  REQUIRE(ce.forward(row, kind.on(Tensor::fromVector({1}, {0}))) == Approx(std::log(4.f)));
}

NN_DEVICE_TEST_CASE("CrossEntropyCriterion equals ClassNLLCriterion after a log-softmax", "[CrossEntropyCriterion]") {
  const Tensor x = scores({6, 10}, 3);
  const Tensor t = kind.on(labels(6, 10));
  nn::CrossEntropyCriterion ce;
  nn::ClassNLLCriterion nll;
  const Tensor logProbabilities = kind.on(logSoftMax(x));
  // The mean loss is about 12.8; on CUDA each row's log-sum-exp may be off by
  // crossEntropyRowBound, and each loss by its own rounding.
  const float nllLoss = nll.forward(logProbabilities, t);
  REQUIRE(ce.forward(kind.on(x), t) ==
          Approx(nllLoss).epsilon(1e-6).margin(kind.tolerance(crossEntropyRowBound(10) + 2 * lossBound(12.9))));
}

NN_DEVICE_TEST_CASE("CrossEntropyCriterion gradient agrees with finite differences", "[CrossEntropyCriterion]") {
  nn::CrossEntropyCriterion ce;
  REQUIRE_THAT(nn::test::checkCriterionGradient(ce, kind.on(scores({4, 5})), kind.on(labels(4, 5))),
               nn::test::AgreesWithin(1e-3));
  nn::CrossEntropyCriterion summed(false);
  REQUIRE_THAT(nn::test::checkCriterionGradient(summed, kind.on(scores({3, 6}, 2)), kind.on(labels(3, 6))),
               nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkCriterionGradient(summed, kind.on(scores({6})), kind.on(Tensor::fromVector({1}, {4}))),
               nn::test::AgreesWithin(1e-3));
}

NN_DEVICE_TEST_CASE("CrossEntropyCriterion rejects bad input naming the criterion, shapes and targets",
                    "[CrossEntropyCriterion]") {
  const nn::Device device = kind.device();
  nn::CrossEntropyCriterion ce;
  const Tensor x = Tensor::zeros({2, 3}, device);
  REQUIRE_THROWS_WITH(ce.forward(x, kind.on(Tensor::fromVector({3}, {0, 1, 2}))),
                      Catch::Contains("nn.CrossEntropyCriterion") && Catch::Contains("[2]") &&
                          Catch::Contains("[2, 3]") && Catch::Contains("[3]"));
  REQUIRE_THROWS_WITH(ce.forward(Tensor::zeros({2, 3, 4}, device), Tensor::zeros({2}, device)),
                      Catch::Contains("nn.CrossEntropyCriterion") && Catch::Contains("[2, 3, 4]"));
  REQUIRE_THROWS_WITH(ce.forward(Tensor::zeros({0, 3}, device), Tensor::zeros({0}, device)),
                      Catch::Contains("nn.CrossEntropyCriterion") && Catch::Contains("[0, 3]"));
  REQUIRE_THROWS_WITH(
      ce.forward(x, kind.on(Tensor::fromVector({2}, {0, 3}))),
      Catch::Contains("nn.CrossEntropyCriterion") && Catch::Contains("target 3") && Catch::Contains("position 1"));
  REQUIRE_THROWS_WITH(ce.backward(x, kind.on(Tensor::fromVector({2}, {0.5f, 0}))).toVector(),
                      Catch::Contains("target 0.5") && Catch::Contains("position 0"));
  REQUIRE_THROWS_WITH(ce.forward(x, Tensor::zeros({2}, kind.other())),
                      Catch::Contains("nn.CrossEntropyCriterion") && Catch::Contains(kind.other().str()));
}

NN_DEVICE_TEST_CASE("CrossEntropyCriterion gives the same result for strided input", "[CrossEntropyCriterion]") {
  nn::CrossEntropyCriterion ce;
  const Tensor strided = kind.on(scores({5, 4}, 3)).transpose(0, 1);
  const Tensor dense = strided.contiguous();
  const Tensor t = kind.on(labels(4, 5));
  REQUIRE(ce.forward(strided, t) == ce.forward(dense, t));
  const Tensor g = ce.backward(dense, t).clone();
  REQUIRE(nn::test::maxAbsDiff(ce.backward(strided, t), g) == 0);
}

NN_DEVICE_TEST_CASE("CrossEntropyCriterion matches PyTorch 1.13", "[CrossEntropyCriterion]") {
  // torch.nn.functional.cross_entropy(scores(scale, shift) as [6, 10], labels(6, 10)), mean
  // and sum, and rows 0 and 5 of the gradient of the mean.
  const Tensor t = kind.on(labels(6, 10));
  const double row = crossEntropyRowBound(10), gradient = crossEntropyGradientBound(10);
  nn::CrossEntropyCriterion ce;
  nn::CrossEntropyCriterion summed(false);
  const Tensor x = kind.on(scores({6, 10}, 3));
  REQUIRE(ce.forward(x, t) == Approx(12.8008738).epsilon(1e-6).margin(kind.tolerance(row + lossBound(12.81))));
  REQUIRE(summed.forward(x, t) == Approx(76.8052444).epsilon(1e-6).margin(kind.tolerance(6 * row + lossBound(76.81))));
  const Tensor g = ce.backward(x, t);
  REQUIRE(nn::test::maxAbsDiff(g.select(0, 0), {3.38923701e-06f, -0.166637003f, 0.00146439276f, 0.157785118f,
                                                6.72385722e-05f, 0.00108382944f, 0.004401471f, 0.00182463822f,
                                                5.82636812e-06f, 1.10168071e-06f}) < 1e-6 + kind.tolerance(gradient));
  REQUIRE(nn::test::maxAbsDiff(g.select(0, 5), {4.72534296e-08f, 1.31706611e-06f, 3.22809456e-06f, 6.44283573e-05f,
                                                0.003538677f, 0.162821621f, -0.166648567f, 0.000113787959f,
                                                9.83773207e-05f, 7.0675901e-06f}) < 1e-6 + kind.tolerance(gradient));
  // Scores around 1000, spread by +-200: the float scores carry about 1e-4 of rounding.
  const Tensor large = kind.on(scores({6, 10}, 50, 1000));
  REQUIRE(ce.forward(large, t) == Approx(210.352737).margin(1e-3 + kind.tolerance(row + lossBound(210.4))));
  REQUIRE(summed.forward(large, t) == Approx(1262.11646).margin(1e-3 + kind.tolerance(6 * row + lossBound(1262.2))));
  const Tensor gl = ce.backward(large, t);
  REQUIRE(nn::test::maxAbsDiff(gl.select(0, 0), {0, -1.f / 6, 0, 1.f / 6, 0, 0, 0, 0, 0, 0}) <
          1e-6 + kind.tolerance(gradient));
  REQUIRE(nn::test::maxAbsDiff(gl.select(0, 5), {0, 0, 0, 0, 0, 1.f / 6, -1.f / 6, 0, 0, 0}) <
          1e-6 + kind.tolerance(gradient));
}

NN_DEVICE_TEST_CASE("ClassNLLCriterion, CrossEntropyCriterion and MSECriterion on another device agree with the host's",
                    "[ClassNLLCriterion][CrossEntropyCriterion][MSECriterion]") {
  // 300 rows: more than the CUDA loss kernel's 256 threads, so threads sum several terms; 13
  // classes; a 1-D input of one row. Inputs non-contiguous on the compared device.
  const nn::Device device = kind.compared();
  for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{300, 13}, std::vector<int64_t>{13}}) {
    CAPTURE(sizes);
    const int64_t batch = sizes.size() == 2 ? sizes[0] : 1;
    const double classes = double(sizes.back());
    const Tensor x = nn::test::randomTensor(sizes, 91, -4, 4);
    std::vector<float> labelValues(batch);
    for (int64_t i = 0; i < batch; ++i) labelValues[i] = float((i * 7) % 13);
    const Tensor t = Tensor::fromVector({batch}, labelValues);
    const Tensor xOn = nn::test::stridedOn(x, device), tOn = t.to(device);
    for (bool sizeAverage : {true, false}) {
      CAPTURE(sizeAverage);
      // The losses within lossBound; gradients element-wise (ClassNLL, MSE) equal bit for bit.
      nn::ClassNLLCriterion nll(sizeAverage), nllOn(sizeAverage);
      const float nllLoss = nll.forward(x, t);
      REQUIRE(std::fabs(nllOn.forward(xOn, tOn) - nllLoss) <= kind.tolerance(lossBound(nllLoss)));
      REQUIRE(nllOn.backward(xOn, tOn).toVector() == nll.backward(x, t).toVector());

      // Cross-entropy: each row's log(sum exp(x - max)) adds the same terms in the same order
      // on both devices, through other expf and logf on CUDA (crossEntropyRowBound), and the
      // loss's own rounding.
      nn::CrossEntropyCriterion ce(sizeAverage), ceOn(sizeAverage);
      const float ceLoss = ce.forward(x, t);
      REQUIRE(std::fabs(ceOn.forward(xOn, tOn) - ceLoss) <=
              kind.tolerance(crossEntropyRowBound(classes) * (sizeAverage ? 1 : batch) + 2 * kEps * std::fabs(ceLoss)));
      REQUIRE(nn::test::maxAbsDiff(ceOn.backward(xOn, tOn), ce.backward(x, t)) <=
              kind.tolerance(crossEntropyGradientBound(classes)));

      // MSE against a non-contiguous target: each term (x - t)^2 is exact IEEE arithmetic.
      const Tensor target = nn::test::randomTensor(sizes, 92, -4, 4);
      nn::MSECriterion mse(sizeAverage), mseOn(sizeAverage);
      const float mseLoss = mse.forward(x, target);
      REQUIRE(std::fabs(mseOn.forward(xOn, nn::test::stridedOn(target, device)) - mseLoss) <=
              kind.tolerance(lossBound(mseLoss)));
      REQUIRE(mseOn.backward(xOn, nn::test::stridedOn(target, device)).toVector() ==
              mse.backward(x, target).toVector());
    }
    // Targets on a CUDA device are checked there, and the loss's read reports a bad one: the
    // CPU's error.
    nn::ClassNLLCriterion nll;
    std::vector<float> bad = labelValues;
    bad.back() = 13.f;
    REQUIRE_THROWS_WITH(nll.forward(xOn, Tensor::fromVector({batch}, bad, device)),
                        Catch::Contains("nn.ClassNLLCriterion") && Catch::Contains("is not a class index in [0, 13)"));
  }
}
