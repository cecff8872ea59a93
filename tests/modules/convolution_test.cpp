// nn::SpatialConvolution: reference values, gradient checks, errors and a PyTorch cross-check
// on every device type, the module on another device compared with the one on the host, and
// the CPU kernel's own paths (unfolding in chunks, whole rows without padding).
//
// On CUDA the module runs through cuDNN, which adds the products of each output, gradInput and
// parameter gradient in another order than the CPU's im2col and OpenBLAS: where two results of
// one value are compared, they may differ by twoOrdersBound of that value's sum.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <memory>

#include "nn/modules/SpatialConvolution.h"
#include "nn/tensor/Random.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"

using nn::Tensor;

namespace {

// values[i] = f(i) over the row-major elements of a tensor of the given sizes.
Tensor formula(const std::vector<int64_t>& sizes, const std::function<double(int64_t)>& f) {
  std::vector<float> values(static_cast<size_t>(nn::product(sizes)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(f(static_cast<int64_t>(i)));
  return Tensor::fromVector(sizes, values);
}

// The worst rounding error of a float sum of `terms` terms (products rounded once more) whose
// magnitudes add up to at most `magnitude`, in any order: gamma(terms + 1) * magnitude with
// gamma(n) = n u / (1 - n u), u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms,
// 3.1). Two computations summing in different orders differ by at most twice that.
double twoOrdersBound(int64_t terms, double magnitude) {
  const double u = std::ldexp(1.0, -24), nu = static_cast<double>(terms + 1) * u;
  return 2 * nu / (1 - nu) * magnitude;
}

}  // namespace

NN_DEVICE_TEST_CASE("SpatialConvolution forward and backward match hand-computed values", "[SpatialConvolution]") {
  // Sums of small integers and halves: exact in any order, on every device.
  nn::SpatialConvolution conv(1, 1, 2, 2);
  conv.weight.copy_(Tensor::fromVector({1, 1, 2, 2}, {1, 2, 3, 4}));
  conv.bias.fill_(0.5f);
  conv.to(kind.device());
  // x = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]; each output is the 2x2 window dotted with [1, 2, 3, 4]:
  // (0,0): 1 + 4 + 12 + 20 = 37, (0,1): 2 + 6 + 15 + 24 = 47, (1,0): 4 + 10 + 21 + 32 = 67,
  // (1,1): 5 + 12 + 24 + 36 = 77; plus the bias 0.5.
  const Tensor x = kind.on(Tensor::fromVector({1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  const Tensor& y = conv.forward(x);
  REQUIRE(y.sizes() == std::vector<int64_t>{1, 2, 2});
  REQUIRE(nn::test::maxAbsDiff(y, {37.5f, 47.5f, 67.5f, 77.5f}) == 0);

  // g = [[1, 0], [0, 2]]: gradInput is W placed at (0,0) plus 2 W placed at (1,1):
  // [[1, 2, 0], [3, 4 + 2, 4], [0, 6, 8]].
  const Tensor g = kind.on(Tensor::fromVector({1, 2, 2}, {1, 0, 0, 2}));
  conv.zeroGradParameters();
  conv.backward(x, g);
  REQUIRE(nn::test::maxAbsDiff(conv.gradInput, {1, 2, 0, 3, 6, 4, 0, 6, 8}) == 0);
  // gradWeight[ky][kx] = x[ky][kx] + 2 x[ky + 1][kx + 1] = (3 ky + kx + 1) + 2 (3 ky + kx + 5):
  // 11, 14, 20, 23. gradBias = sum of g = 3.
  REQUIRE(nn::test::maxAbsDiff(conv.gradWeight, {11, 14, 20, 23}) == 0);
  REQUIRE(nn::test::maxAbsDiff(conv.gradBias, {3}) == 0);

  // A second backward with scale 0.5 accumulates half as much again.
  conv.backward(x, g, 0.5f);
  REQUIRE(nn::test::maxAbsDiff(conv.gradWeight, {16.5f, 21, 30, 34.5f}) == 0);
  REQUIRE(nn::test::maxAbsDiff(conv.gradBias, {4.5f}) == 0);
}

NN_DEVICE_TEST_CASE("SpatialConvolution pads with zeros and strides over several planes", "[SpatialConvolution]") {
  // kW = 3, kH = 1, dW = 2, dH = 1, padW = 1, padH = 0: a 1-D convolution along the width.
  nn::SpatialConvolution conv(2, 1, 3, 1, 2, 1, 1, 0);
  REQUIRE(conv.toString() == "nn.SpatialConvolution(2 -> 1, 3x1, 2,1, 1,0)");
  conv.weight.copy_(Tensor::fromVector({1, 2, 1, 3}, {1, 1, 1, 1, 0, -1}));
  conv.bias.zero_();
  conv.to(kind.device());
  // Padded planes [0, 1, 2, 3, 4, 0] and [0, 10, 20, 30, 40, 0]; outW = (4 + 2 - 3) / 2 + 1 = 2,
  // windows at padded columns 0..2 and 2..4:
  // out0 = (0 + 1 + 2) + (0 - 20) = -17, out1 = (2 + 3 + 4) + (20 - 40) = -11.
  const Tensor x = kind.on(Tensor::fromVector({1, 2, 1, 4}, {1, 2, 3, 4, 10, 20, 30, 40}));
  REQUIRE(nn::test::maxAbsDiff(conv.forward(x), {-17, -11}) == 0);
  REQUIRE(conv.output.sizes() == std::vector<int64_t>{1, 1, 1, 2});
  // gradOutput [1, 1]: each input cell gets the sum of the taps that read it. Input column j
  // is padded column j + 1: window 0 reads it with tap j + 1, window 1 with tap j - 1.
  // Plane 0 (taps 1, 1, 1): [1, 1 + 1, 1, 1]. Plane 1 (taps 1, 0, -1): [0, -1 + 1, 0, -1].
  conv.backward(x, kind.on(Tensor::fromVector({1, 1, 1, 2}, {1, 1})));
  REQUIRE(nn::test::maxAbsDiff(conv.gradInput, {1, 2, 1, 1, 0, 0, 0, -1}) == 0);
  // gradWeight[c][t] = window 0's cell t + window 1's cell t: plane 0 [0 + 2, 1 + 3, 2 + 4],
  // plane 1 [0 + 20, 10 + 30, 20 + 40]; gradBias = 2.
  REQUIRE(nn::test::maxAbsDiff(conv.gradWeight, {2, 4, 6, 20, 40, 60}) == 0);
  REQUIRE(nn::test::maxAbsDiff(conv.gradBias, {2}) == 0);
}

NN_DEVICE_TEST_CASE("SpatialConvolution treats each sample of a batch alone", "[SpatialConvolution]") {
  nn::manualSeed(5);
  nn::SpatialConvolution conv(3, 4, 3, 2, 2, 1, 1, 1);
  conv.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({3, 3, 6, 7}, 21));
  const Tensor g = kind.on(nn::test::randomTensor({3, 4, 7, 4}, 22));
  // cuDNN may pick other algorithms, summing in other orders, for one sample than for three:
  // an output sums n = 3 * 2 * 3 = 18 products of |x| < 1 and |w| <= 1 / sqrt(18) and the
  // bias; an input cell at most 4 planes x 6 taps of |g| < 1 and w; a weight gradient the
  // 3 * 7 * 4 = 84 products of the batch's positions, a bias gradient 84 terms.
  const double w = 1 / std::sqrt(18.0);
  const double output = 1e-6 + kind.tolerance(twoOrdersBound(19, 19 * w));
  const double input = 1e-6 + kind.tolerance(twoOrdersBound(24, 24 * w));
  // On the CPU a batch's weight and bias gradients add sample by sample, as the samples alone
  // do: equal to the last bit.
  const double parameters = kind.tolerance(twoOrdersBound(84, 84));
  conv.zeroGradParameters();
  const Tensor y = conv.forward(x).clone();
  const Tensor gi = conv.backward(x, g).clone();
  const Tensor gw = conv.gradWeight.clone();
  const Tensor gb = conv.gradBias.clone();
  conv.zeroGradParameters();
  for (int64_t n = 0; n < 3; ++n) {
    const Tensor xn = x.select(0, n);
    REQUIRE(nn::test::maxAbsDiff(conv.forward(xn), y.select(0, n)) < output);
    REQUIRE(nn::test::maxAbsDiff(conv.backward(xn, g.select(0, n)), gi.select(0, n)) < input);
  }
  REQUIRE(nn::test::maxAbsDiff(conv.gradWeight, gw) <= parameters);
  REQUIRE(nn::test::maxAbsDiff(conv.gradBias, gb) <= parameters);
}

TEST_CASE("SpatialConvolution gives a large batch, unfolded in chunks, the results of each sample alone",
          "[SpatialConvolution]") {
  // The module unfolds at most 256 KB of columns at a time, and for outputs of fewer than 256
  // positions at least 256 columns where they fit 1 MB, with one product for a chunk's forward
  // and one for its gradInput. 20 -> 50 planes, 5x5, on 12x12: 500 x 64 floats (128 KB) per
  // sample, so 9 samples take chunks of 4, 4 and 1. 32 -> 8 planes, 3x3, padding 1, on 10x10:
  // 288 x 100 floats (115 KB) per sample, chunks of 3 and 2.
  struct Case {
    int64_t planes, outPlanes, k, pad, batch, size;
  };
  for (const Case& c : {Case{20, 50, 5, 0, 9, 12}, Case{32, 8, 3, 1, 5, 10}}) {
    nn::manualSeed(8);
    nn::SpatialConvolution conv(c.planes, c.outPlanes, c.k, c.k, 1, 1, c.pad, c.pad);
    const int64_t out = c.size + 2 * c.pad - c.k + 1;
    const Tensor x = nn::test::randomTensor({c.batch, c.planes, c.size, c.size}, 23);
    const Tensor g = nn::test::randomTensor({c.batch, c.outPlanes, out, out}, 24);
    conv.zeroGradParameters();
    const Tensor y = conv.forward(x).clone();
    const Tensor gi = conv.backward(x, g, 0.5f).clone();
    const Tensor gw = conv.gradWeight.clone();
    const Tensor gb = conv.gradBias.clone();
    conv.zeroGradParameters();
    for (int64_t n = 0; n < c.batch; ++n) {
      const Tensor xn = x.select(0, n);
      REQUIRE(nn::test::maxAbsDiff(conv.forward(xn), y.select(0, n)) < 1e-5);
      REQUIRE(nn::test::maxAbsDiff(conv.backward(xn, g.select(0, n), 0.5f), gi.select(0, n)) < 1e-5);
    }
    // Chunks add their samples' gradients in sample order, as the samples alone do.
    REQUIRE(nn::test::maxAbsDiff(conv.gradWeight, gw) == 0);
    REQUIRE(nn::test::maxAbsDiff(conv.gradBias, gb) == 0);
  }
}

NN_DEVICE_TEST_CASE("SpatialConvolution gradients agree with finite differences", "[SpatialConvolution]") {
  nn::manualSeed(3);
  nn::SpatialConvolution conv(2, 3, 3, 2, 2, 1, 1, 1);
  conv.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({2, 2, 5, 6}, 11));
  REQUIRE_THAT(nn::test::checkInputGradient(conv, x), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(conv, x), nn::test::EachAgreesWithin(1e-3, 2));
  const Tensor single = kind.on(nn::test::randomTensor({2, 4, 3}, 12));
  REQUIRE_THAT(nn::test::checkInputGradient(conv, single), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(conv, single), nn::test::EachAgreesWithin(1e-3, 2));
}

NN_DEVICE_TEST_CASE("SpatialConvolution strided without padding subsamples and agrees with finite differences",
                    "[SpatialConvolution]") {
  // A residual network's 1x1 shortcut of stride 2: output (o, oy, ox) is the bias plus the
  // weighted input planes at (2 oy, 2 ox). Then 3x3 kernels of strides 2 and 3, which unfold
  // every tap of whole planes without bounds.
  nn::manualSeed(6);
  nn::SpatialConvolution shortcut(3, 2, 1, 1, 2, 2);
  shortcut.to(kind.device());
  const Tensor x = nn::test::randomTensor({2, 3, 7, 6}, 31);
  const std::vector<float> in = x.toVector(), w = shortcut.weight.toVector(), b = shortcut.bias.toVector();
  const std::vector<float> y = shortcut.forward(kind.on(x)).toVector();
  REQUIRE(shortcut.output.sizes() == std::vector<int64_t>{2, 2, 4, 3});
  double worst = 0;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t o = 0; o < 2; ++o)
      for (int64_t oy = 0; oy < 4; ++oy)
        for (int64_t ox = 0; ox < 3; ++ox) {
          double expected = b[o];
          for (int64_t c = 0; c < 3; ++c) expected += w[o * 3 + c] * in[((n * 3 + c) * 7 + 2 * oy) * 6 + 2 * ox];
          worst = std::max(worst, std::abs(expected - y[((n * 2 + o) * 4 + oy) * 3 + ox]));
        }
  CHECK(worst < 1e-6);
  REQUIRE_THAT(nn::test::checkInputGradient(shortcut, kind.on(x)), nn::test::AgreesWithin(1e-3));
  REQUIRE_THAT(nn::test::checkParameterGradients(shortcut, kind.on(x)), nn::test::EachAgreesWithin(1e-3, 2));
  for (const int64_t stride : {2, 3}) {
    nn::SpatialConvolution conv(2, 3, 3, 3, stride, stride);
    conv.to(kind.device());
    const Tensor input = kind.on(nn::test::randomTensor({2, 2, 8, 9}, 32));
    REQUIRE_THAT(nn::test::checkInputGradient(conv, input), nn::test::AgreesWithin(1e-3));
    REQUIRE_THAT(nn::test::checkParameterGradients(conv, input), nn::test::EachAgreesWithin(1e-3, 2));
  }
}

TEST_CASE("SpatialConvolution without padding or stride agrees with the padded case and finite differences",
          "[SpatialConvolution]") {
  // Without padding and with stride 1 the module moves whole rows, with a fixed row length for
  // outputs 7, 8, 14, 16, 24, 28 or 32 wide; with padding it unfolds a zero-padded copy of each
  // plane the same way (its outputs here 2 wider: 7, 14 and 28 from 5, 12 and 26). The
  // unpadded output is the padded one without its border, whose windows reach into the
  // padding, and a gradOutput that is zero on that border gives both the same gradients.
  for (const int64_t outWidth : {4, 5, 7, 8, 12, 14, 16, 24, 26, 28, 32}) {
    nn::manualSeed(9);
    nn::SpatialConvolution plain(3, 2, 3, 2);
    nn::SpatialConvolution padded(3, 2, 3, 2, 1, 1, 1, 1);
    padded.weight.copy_(plain.weight);
    padded.bias.copy_(plain.bias);
    const int64_t width = outWidth + 2;
    const Tensor x = nn::test::randomTensor({2, 3, 5, width}, 13);
    const Tensor g = nn::test::randomTensor({2, 2, 4, outWidth}, 14);
    // padded: (5 + 2 - 2) + 1 = 6 rows, (width + 2 - 3) + 1 = outWidth + 2 columns; row r,
    // column c of the unpadded output is row r + 1, column c + 1 of the padded one.
    Tensor gPadded = Tensor::zeros({2, 2, 6, outWidth + 2});
    gPadded.narrow(2, 1, 4).narrow(3, 1, outWidth).copy_(g);
    plain.zeroGradParameters();
    padded.zeroGradParameters();
    const Tensor& y = plain.forward(x);
    REQUIRE(y.sizes() == std::vector<int64_t>{2, 2, 4, outWidth});
    REQUIRE(nn::test::maxAbsDiff(y, padded.forward(x).narrow(2, 1, 4).narrow(3, 1, outWidth)) < 1e-6);
    REQUIRE(nn::test::maxAbsDiff(plain.backward(x, g), padded.backward(x, gPadded)) < 1e-6);
    REQUIRE(nn::test::maxAbsDiff(plain.gradWeight, padded.gradWeight) < 1e-5);
    REQUIRE(nn::test::maxAbsDiff(plain.gradBias, padded.gradBias) < 1e-5);
    REQUIRE_THAT(nn::test::checkInputGradient(plain, x), nn::test::AgreesWithin(1e-3));
    REQUIRE_THAT(nn::test::checkParameterGradients(plain, x), nn::test::EachAgreesWithin(1e-3, 2));
  }
}

NN_DEVICE_TEST_CASE("SpatialConvolution rejects bad input with a message naming it", "[SpatialConvolution]") {
  nn::SpatialConvolution conv(3, 8, 5, 5);
  conv.to(kind.device());
  const std::string name = "nn.SpatialConvolution(3 -> 8, 5x5)";
  REQUIRE_THROWS_WITH(
      conv.forward(Tensor::zeros({4, 2, 28, 28}, kind.device())),
      Catch::Contains(name) && Catch::Contains("[4, 2, 28, 28]") && Catch::Contains("[batch, 3, height, width]"));
  REQUIRE_THROWS_WITH(conv.forward(Tensor::zeros({4, 3, 28, 4}, kind.device())),
                      Catch::Contains(name) && Catch::Contains("[4, 3, 28, 4]") && Catch::Contains("width at least 5"));
  REQUIRE_THROWS_WITH(conv.forward(Tensor::zeros({3, 28}, kind.device())),
                      Catch::Contains(name) && Catch::Contains("[3, 28]"));
  REQUIRE_THROWS_WITH(conv.forward(Tensor::zeros({1, 1, 3, 28, 28}, kind.device())),
                      Catch::Contains(name) && Catch::Contains("[1, 1, 3, 28, 28]"));
  REQUIRE_THROWS_WITH(
      conv.forward(Tensor::zeros({1, 3, 8, 8}, kind.other())),
      Catch::Contains(name) && Catch::Contains(kind.other().str()) && Catch::Contains(kind.device().str()));

  const Tensor x = Tensor::zeros({2, 3, 8, 9}, kind.device());
  conv.forward(x);
  REQUIRE(conv.output.sizes() == std::vector<int64_t>{2, 8, 4, 5});
  REQUIRE_THROWS_WITH(conv.backward(x, Tensor::zeros({2, 8, 5, 4}, kind.device())),
                      Catch::Contains(name) && Catch::Contains("[2, 8, 5, 4]") && Catch::Contains("[2, 8, 4, 5]"));

  // Padding 2 on each side lets a 5x5 kernel see a 1x1 input; no padding does not.
  nn::SpatialConvolution padded(3, 8, 5, 5, 1, 1, 2, 2);
  padded.to(kind.device());
  REQUIRE(padded.forward(Tensor::zeros({3, 1, 1}, kind.device())).sizes() == std::vector<int64_t>{8, 1, 1});
  REQUIRE_THROWS_WITH(conv.forward(Tensor::zeros({3, 1, 1}, kind.device())),
                      Catch::Contains(name) && Catch::Contains("[3, 1, 1]"));

  REQUIRE_THROWS_WITH(nn::SpatialConvolution(3, 8, 0, 5), Catch::Contains("nn.SpatialConvolution"));
  REQUIRE_THROWS_WITH(nn::SpatialConvolution(3, 8, 5, 5, 1, 1, -1, 0), Catch::Contains("-1"));
}

NN_DEVICE_TEST_CASE("SpatialConvolution backward needs a forward on the same input shape", "[SpatialConvolution]") {
  nn::SpatialConvolution conv(1, 2, 3, 3);
  conv.to(kind.device());
  const Tensor x = Tensor::zeros({2, 1, 5, 5}, kind.device());
  const Tensor g = Tensor::zeros({2, 2, 3, 3}, kind.device());
  REQUIRE_THROWS_WITH(conv.accGradParameters(x, g, 1.f), Catch::Contains("forward"));
  conv.forward(Tensor::zeros({1, 1, 5, 5}, kind.device()));
  REQUIRE_THROWS_WITH(conv.accGradParameters(x, g, 1.f), Catch::Contains("forward"));
  conv.forward(x);
  conv.clearState();
  REQUIRE_THROWS_WITH(conv.accGradParameters(x, g, 1.f), Catch::Contains("forward"));
}

NN_DEVICE_TEST_CASE("SpatialConvolution gives the same results for non-contiguous input", "[SpatialConvolution]") {
  nn::manualSeed(4);
  nn::SpatialConvolution conv(2, 3, 3, 2, 2, 2, 1, 0);
  conv.to(kind.device());
  const Tensor stored = kind.on(nn::test::randomTensor({2, 2, 7, 5}, 31));
  const Tensor strided = stored.transpose(2, 3);  // [2, 2, 5, 7]
  REQUIRE_FALSE(strided.isContiguous());
  const Tensor copy = strided.contiguous();
  const Tensor gStrided = kind.on(nn::test::randomTensor({2, 3, 4, 2}, 32)).transpose(2, 3);
  REQUIRE_FALSE(gStrided.isContiguous());

  conv.zeroGradParameters();
  const Tensor y = conv.forward(copy).clone();
  const Tensor gi = conv.backward(copy, gStrided.contiguous()).clone();
  const Tensor gw = conv.gradWeight.clone();
  const Tensor gb = conv.gradBias.clone();
  conv.zeroGradParameters();
  REQUIRE(nn::test::maxAbsDiff(conv.forward(strided), y) == 0);
  REQUIRE(nn::test::maxAbsDiff(conv.backward(strided, gStrided), gi) == 0);
  REQUIRE(nn::test::maxAbsDiff(conv.gradWeight, gw) == 0);
  REQUIRE(nn::test::maxAbsDiff(conv.gradBias, gb) == 0);
}

NN_DEVICE_TEST_CASE("SpatialConvolution clone is independent and computes the same output", "[SpatialConvolution]") {
  nn::manualSeed(6);
  auto conv = std::make_shared<nn::SpatialConvolution>(2, 4, 3, 3, 2, 2, 1, 1);
  conv->to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({3, 2, 6, 5}, 41));
  const Tensor y = conv->forward(x).clone();
  const nn::ModulePtr copy = conv->clone();
  REQUIRE(copy->typeName() == "nn.SpatialConvolution");
  REQUIRE(copy->toString() == "nn.SpatialConvolution(2 -> 4, 3x3, 2,2, 1,1)");
  REQUIRE(nn::test::maxAbsDiff(copy->forward(x), y) == 0);
  auto* typed = dynamic_cast<nn::SpatialConvolution*>(copy.get());
  REQUIRE(typed != nullptr);
  REQUIRE(typed->weight.storage() != conv->weight.storage());
  typed->weight.fill_(0);
  typed->bias.fill_(0);
  REQUIRE(nn::test::maxAbsDiff(conv->forward(x), y) == 0);
  REQUIRE(nn::test::maxAbsDiff(copy->forward(x), std::vector<float>(y.numel(), 0.f)) == 0);
}

NN_DEVICE_TEST_CASE("SpatialConvolution moved to another device computes the same there", "[SpatialConvolution]") {
  // From cpu:0 to cpu:1 the same kernels: the same bits. To a CUDA device, cuDNN sums an
  // output's 18 products (|w| <= 1 / sqrt(18)) and the bias, and an input cell's 3 planes x 9
  // taps, in other orders.
  const nn::Device device = kind.compared();
  const double w = 1 / std::sqrt(18.0);
  nn::manualSeed(7);
  auto conv = std::make_shared<nn::SpatialConvolution>(2, 3, 3, 3, 1, 1, 1, 1);
  const Tensor x = nn::test::randomTensor({2, 2, 5, 4}, 45);
  const Tensor g = nn::test::randomTensor({2, 3, 5, 4}, 46);
  const Tensor y = conv->forward(x).clone();
  const Tensor gi = conv->backward(x, g).clone();
  conv->to(device);
  REQUIRE(conv->weight.device() == device);
  const Tensor x1 = x.to(device);
  REQUIRE(conv->forward(x1).device() == device);
  REQUIRE(nn::test::maxAbsDiff(conv->output.to(nn::Device()), y) <= kind.tolerance(twoOrdersBound(19, 19 * w)));
  REQUIRE(nn::test::maxAbsDiff(conv->backward(x1, g.to(device)).to(nn::Device()), gi) <=
          kind.tolerance(twoOrdersBound(27, 27 * w)));
  REQUIRE_THROWS_WITH(conv->forward(x), Catch::Contains(device.str()) && Catch::Contains("cpu:0"));
}

TEST_CASE("SpatialConvolution prints as Torch7 does", "[SpatialConvolution]") {
  REQUIRE(nn::SpatialConvolution(1, 20, 5, 5).toString() == "nn.SpatialConvolution(1 -> 20, 5x5)");
  REQUIRE(nn::SpatialConvolution(3, 16, 3, 5, 2, 1).toString() == "nn.SpatialConvolution(3 -> 16, 3x5, 2,1)");
  REQUIRE(nn::SpatialConvolution(3, 16, 3, 3, 1, 1, 1, 1).toString() ==
          "nn.SpatialConvolution(3 -> 16, 3x3, 1,1, 1,1)");
}

TEST_CASE("SpatialConvolution initialises uniformly in +-1/sqrt(kW*kH*nInputPlane)", "[SpatialConvolution]") {
  nn::manualSeed(1);
  nn::SpatialConvolution conv(4, 50, 5, 5);
  const float bound = 0.1f;  // 1 / sqrt(5 * 5 * 4)
  float lo = 1, hi = -1;
  for (float v : conv.weight.toVector()) lo = std::min(lo, v), hi = std::max(hi, v);
  REQUIRE(lo >= -bound);
  REQUIRE(hi <= bound);
  REQUIRE(hi - lo > 1.9f * bound);  // 5000 draws fill the interval
  for (float v : conv.bias.toVector()) REQUIRE(std::fabs(v) <= bound);
  // Weight first, then bias, from the default generator: the same seed gives the same module.
  nn::manualSeed(1);
  nn::SpatialConvolution again(4, 50, 5, 5);
  REQUIRE(nn::test::maxAbsDiff(conv.weight, again.weight) == 0);
  REQUIRE(nn::test::maxAbsDiff(conv.bias, again.bias) == 0);
}

NN_DEVICE_TEST_CASE("SpatialConvolution allocates nothing in a repeated training step", "[SpatialConvolution]") {
  nn::SpatialConvolution conv(3, 6, 5, 5, 1, 1, 2, 2);
  conv.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({4, 3, 12, 12}, 51));
  const Tensor g = kind.on(nn::test::randomTensor({4, 6, 12, 12}, 52));
  conv.forward(x);
  conv.backward(x, g);
  const int64_t before = nn::storageAllocationCount();
  conv.forward(x);
  conv.backward(x, g);
  REQUIRE(nn::storageAllocationCount() == before);
}

namespace {

// Produced once by tests/reference/make_spatial_reference.py with PyTorch 1.13: F.conv2d(x, w, b,
// stride=2, padding=1) on x = sin(0.37 i) of size [2, 2, 7, 9], w = 0.3 cos(0.23 i) of size
// [3, 2, 5, 3], b[o] = 0.05 (o + 1) - 0.1, then backward of gradOutput = cos(0.11 i).
// kConvOutput: [2, 3, 3, 5]
const std::vector<float> kConvOutput = {
    0.57607126f,    1.0420924f,    0.70482761f,   -0.02725937f,   -0.47850245f,  -0.011137974f, -0.29580086f,
    -0.59604692f,   -0.61067587f,  -0.32067168f,  -0.92615795f,   -1.0238192f,   -0.23048301f,  0.65725732f,
    0.72766876f,    0.22456576f,   0.52012801f,   0.3995319f,     0.069955453f,  -0.22272412f,  -0.027085377f,
    -0.22794293f,   -0.40889648f,  -0.37597129f,  -0.17067276f,   -0.7352488f,   -0.91264832f,  -0.21403979f,
    0.59652478f,    0.75011158f,   -0.20970343f,  -0.19352932f,   -0.053011138f, 0.1413883f,    0.11513911f,
    -0.033050273f,  -0.076076746f, -0.071047321f, -0.0027026385f, 0.042227566f,  -0.27336392f,  -0.46512085f,
    -0.11871244f,   0.31594324f,   0.49610099f,   -0.44532752f,   -1.0433409f,   -1.0938748f,   -0.5983966f,
    -0.0040570125f, -0.27815542f,  -0.095777854f, 0.31544343f,    0.53551471f,   0.34322068f,   0.76940411f,
    1.1884954f,     0.70993292f,   -0.16612227f,  -0.56272161f,   -0.13061146f,  -0.44443029f,  -0.51105142f,
    -0.31036049f,   0.0075324946f, -0.10291246f,  0.027349621f,   0.30507591f,   0.42322856f,   0.28555295f,
    0.67962748f,    1.1285514f,    0.72777182f,   -0.053678039f,  -0.4855454f,   0.23224141f,   0.31827497f,
    0.2601198f,     0.092058688f,  0.016345888f,  0.11025891f,    0.14039716f,   0.18227296f,   0.15496159f,
    0.12264475f,    0.33937427f,   0.65268004f,   0.47739068f,    0.078548998f,  -0.22942154f,
};

// kConvGradInput: [2, 2, 7, 9]
const std::vector<float> kConvGradInput = {
    0.34398976f,   0.65752131f,   0.33793595f,   0.64192241f,    0.32779723f,   0.61856401f,   0.31369618f,
    0.58772856f,   0.29580325f,   0.39362276f,   0.7415787f,     0.37419745f,   0.69971329f,   0.3502489f,
    0.64938986f,   0.32206663f,   0.5912168f,    0.28999129f,    0.37135974f,   0.71748167f,   0.37319204f,
    0.71628362f,   0.37051329f,   0.70642722f,   0.36335582f,    0.68803161f,   0.35180619f,   0.11816037f,
    0.2177659f,    0.1072297f,    0.19496885f,   0.095002919f,   0.16981511f,   0.081627704f,  0.14260861f,
    0.067265801f,  0.33600399f,   0.62661296f,   0.3161402f,     0.58433235f,   0.29245505f,   0.53498846f,
    0.26523471f,   0.47917771f,   0.23480828f,   0.26387289f,    0.51232499f,   0.27188921f,   0.52427459f,
    0.27661896f,   0.52988678f,   0.278005f,     0.52909386f,    0.27603057f,   0.26485392f,   0.50851065f,
    0.26610005f,   0.50770134f,   0.26412961f,   0.50075495f,    0.25896645f,   0.48775557f,   0.25067291f,
    -0.3375878f,   -0.65357548f,  -0.34040323f,  -0.65492833f,   -0.33910394f,  -0.64836442f,  -0.3337056f,
    -0.63396335f,  -0.32427353f,  -0.40737265f,  -0.77599347f,   -0.39688185f,  -0.75092924f,  -0.38159364f,
    -0.71678787f,  -0.36169276f,  -0.6739822f,   -0.33741984f,   -0.30271232f,  -0.59387255f,  -0.31439528f,
    -0.61225432f,  -0.32227793f,  -0.62323546f,  -0.32626489f,   -0.626683f,    -0.32630801f,  -0.082868837f,
    -0.15105632f,  -0.074702606f, -0.13394752f,  -0.065633409f,  -0.11521947f,  -0.055770811f, -0.095098726f,
    -0.045234073f, -0.32240683f,  -0.61090225f,  -0.31460845f,   -0.59186476f,  -0.30300716f,  -0.56567293f,
    -0.28774315f,  -0.53264332f,  -0.26900098f,  -0.18824176f,   -0.37776607f,  -0.20830038f,  -0.41370875f,
    -0.2258411f,   -0.44465053f,  -0.24065189f,  -0.47021753f,   -0.25255373f,  -0.22962351f,  -0.45130283f,
    -0.24207683f,  -0.47238263f,  -0.25160393f,  -0.48775235f,   -0.25808975f,  -0.4972263f,   -0.26145577f,
    0.11615863f,   0.25768775f,   0.15122259f,   0.32354754f,    0.18445861f,   0.38549629f,   0.21546492f,
    0.44278526f,   0.24386674f,   0.24356791f,   0.50552124f,    0.28008053f,   0.57278854f,   0.31320766f,
    0.63313198f,   0.3425487f,    0.68582225f,   0.36774918f,    0.051318273f,  0.14109774f,   0.091589503f,
    0.21753454f,   0.13075362f,   0.29134181f,   0.16833721f,    0.36162746f,   0.20388602f,   0.11826279f,
    0.24143513f,   0.12775023f,   0.25815409f,   0.13569343f,    0.27175236f,   0.14199644f,   0.28206584f,
    0.14658299f,   0.23697025f,   0.48828802f,   0.26719004f,    0.54313207f,   0.2941801f,    0.5914107f,
    0.31761417f,   0.63254052f,   0.33720896f,   -0.022979608f,  -0.01261545f,  0.0075751953f, 0.045664329f,
    0.038038421f,  0.10339206f,   0.068041824f,  0.15987001f,    0.097222768f,  0.037137382f,  0.099649742f,
    0.065841302f,  0.15383537f,   0.093749374f,  0.20616144f,    0.12052421f,   0.25599548f,   0.14584216f,
    -0.036472153f, -0.10689092f,  -0.073413223f, -0.1772256f,    -0.1094669f,   -0.24541803f,  -0.14419734f,
    -0.31064385f,  -0.17718478f,  -0.16696851f,  -0.36303401f,   -0.20753372f,  -0.43883795f,  -0.24559036f,
    -0.50933713f,  -0.28067824f,  -0.5736798f,   -0.31237343f,   0.048377901f,  0.054731444f,  0.012607379f,
    -0.014133533f, -0.023315571f, -0.082827605f, -0.058956642f,  -0.15052049f,  -0.093885101f, -0.087369852f,
    -0.17894341f,  -0.093879111f, -0.19016643f,  -0.09925361f,   -0.19909091f,  -0.10342825f,  -0.20560865f,
    -0.10635273f,  -0.12767868f,  -0.27965173f,  -0.15992889f,   -0.33952904f,  -0.19024593f,  -0.39530224f,
    -0.21826331f,  -0.44629708f,  -0.24364239f,  0.14334932f,    0.2495068f,    0.11740945f,   0.19869579f,
    0.090050384f,  0.14548305f,   0.061602794f,  0.090511695f,   0.032410577f,  0.068490855f,  0.10454678f,
    0.040319551f,  0.050159808f,  0.011660884f,  -0.0048334668f, -0.017138768f, -0.059768319f, -0.045731258f,
};

// kConvGradWeight: [3, 2, 5, 3]
const std::vector<float> kConvGradWeight = {
    2.5000861f,   2.0500631f,    1.9003659f,    -1.2606804f,   -0.7618764f,  -0.39926332f, 1.3282835f,   0.69595993f,
    0.48873565f,  -1.3488755f,   -0.60541362f,  -0.56090981f,  -0.24979706f, -0.73028505f, -0.84153318f, -1.3785453f,
    -0.75063699f, -1.2863373f,   0.77917582f,   -0.081189744f, 0.59869224f,  -0.55913728f, 0.23101495f,  -0.5397442f,
    0.31930959f,  -0.3726635f,   0.46169332f,   -1.0427166f,   -0.48124292f, -1.1259831f,  5.1108661f,   4.9467864f,
    5.399826f,    -7.6533422f,   -7.3421063f,   -7.8126001f,   7.4456944f,   7.1739902f,   7.6118441f,   -6.9745274f,
    -6.7519684f,  -7.141686f,    5.4068646f,    5.0543389f,    5.3937879f,   -0.65258181f, -0.92379677f, -0.80613393f,
    1.5345082f,   1.6328385f,    1.6244094f,    -0.10117568f,  -0.26270026f, -0.16301993f, -1.3357375f,  -1.1167362f,
    -1.3041391f,  0.89584613f,   0.83935022f,   0.78340977f,   -3.3088388f,  -2.8328519f,  -2.754844f,   2.4717586f,
    1.9237051f,   1.6355426f,    -2.5065031f,   -1.8311845f,   -1.6932466f,  2.4525368f,   1.6738561f,   1.6910233f,
    -0.60579568f, -0.069522679f, -0.011989232f, 1.4818106f,    0.89682055f,  1.4139016f,   -1.0219992f,  -0.1771937f,
    -0.8557418f,  0.57514751f,   -0.18944477f,  0.56554085f,   -0.10794001f, 0.54937768f,  -0.25532418f, 0.90095645f,
    0.34842265f,  1.0020149f,
};

// kConvGradBias: [3]
const std::vector<float> kConvGradBias = {
    20.891314f,
    -3.8141916f,
    -20.287748f,
};

}  // namespace

NN_DEVICE_TEST_CASE("SpatialConvolution matches PyTorch's conv2d with stride 2 and padding 1", "[SpatialConvolution]") {
  nn::SpatialConvolution conv(2, 3, 3, 5, 2, 2, 1, 1);
  conv.weight.copy_(formula({3, 2, 5, 3}, [](int64_t i) { return 0.3 * std::cos(0.23 * i); }));
  conv.bias.copy_(formula({3}, [](int64_t o) { return 0.05 * (o + 1) - 0.1; }));
  conv.to(kind.device());
  const Tensor x = kind.on(formula({2, 2, 7, 9}, [](int64_t i) { return std::sin(0.37 * i); }));
  const Tensor g = kind.on(formula({2, 3, 3, 5}, [](int64_t i) { return std::cos(0.11 * i); }));
  // cuDNN's sums against the CPU's, with |x|, |g| <= 1 and |w| <= 0.3: an output 30 products
  // and the bias (0.1); an input cell at most 3 planes x 15 taps; a weight or bias gradient the
  // 2 * 3 * 5 = 30 positions of the batch.
  const double output = 1e-5 + kind.tolerance(twoOrdersBound(31, 30 * 0.3 + 0.1));
  const double input = 1e-5 + kind.tolerance(twoOrdersBound(45, 45 * 0.3));
  const double parameters = 1e-5 + kind.tolerance(twoOrdersBound(30, 30));
  conv.zeroGradParameters();
  const Tensor& y = conv.forward(x);
  REQUIRE(y.sizes() == std::vector<int64_t>{2, 3, 3, 5});
  REQUIRE(nn::test::maxAbsDiff(y, kConvOutput) < output);
  REQUIRE(nn::test::maxAbsDiff(conv.backward(x, g), kConvGradInput) < input);
  REQUIRE(nn::test::maxAbsDiff(conv.gradWeight, kConvGradWeight) < parameters);
  REQUIRE(nn::test::maxAbsDiff(conv.gradBias, kConvGradBias) < parameters);
}

NN_DEVICE_TEST_CASE("SpatialConvolution on another device gives the host's results within the rounding of a sum",
                    "[SpatialConvolution]") {
  const nn::Device device = kind.compared();
  struct Case {
    const char* name;
    std::vector<int64_t> sizes;  // the input's; 3 planes
    int64_t kW, kH, d, pad;
    bool strided;  // a non-contiguous input
  };
  const std::vector<Case> cases = {
      {"3x3 stride 2 pad 1", {3, 3, 11, 9}, 3, 3, 2, 1, false},
      {"5x3 stride 1", {5, 3, 8, 13}, 5, 3, 1, 0, false},
      {"3-D input", {3, 7, 9}, 3, 3, 2, 1, false},
      {"non-contiguous input", {3, 3, 9, 11}, 3, 3, 2, 1, true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    nn::manualSeed(7);
    nn::SpatialConvolution reference(3, 5, c.kW, c.kH, c.d, c.d, c.pad, c.pad);
    auto tested = std::dynamic_pointer_cast<nn::SpatialConvolution>(reference.clone());
    tested->to(device);
    // The non-contiguous input is a transposed view of a tensor stored [3, 3, 11, 9].
    const Tensor stored = c.strided ? nn::test::randomTensor({c.sizes[0], c.sizes[1], c.sizes[3], c.sizes[2]}, 31)
                                    : nn::test::randomTensor(c.sizes, 31);
    const Tensor x = c.strided ? stored.transpose(2, 3) : stored;
    REQUIRE(x.isContiguous() != c.strided);
    const Tensor xOn = x.to(device);
    const Tensor y = reference.forward(x).clone();
    const Tensor g = nn::test::randomTensor(y.sizes(), 32);
    const Tensor gOn = g.to(device);
    const Tensor yOn = tested->forward(xOn).clone();
    REQUIRE(yOn.device() == device);
    // Two backward passes of scale 0.5 from zero: accGradParameters adds to the gradients.
    reference.zeroGradParameters();
    tested->zeroGradParameters();
    for (int pass = 0; pass < 2; ++pass) {
      reference.backward(x, g, 0.5f);
      tested->backward(xOn, gOn, 0.5f);
    }

    // Every value is a sum of products, which the CPU (im2col and OpenBLAS) and cuDNN add in
    // different orders. Inputs and gradOutput lie in [-1, 1), weight and bias within
    // w = 1 / sqrt(n), n = 3 kH kW (the module's reset), outputs are summed over the positions
    // p = batch outH outW:
    //   output:     at most n products below w, plus the bias below w;
    //   gradInput:  at most 5 kH kW products below w (5 output planes, every tap);
    //   gradWeight: p products below 1, twice times 0.5;
    //   gradBias:   p terms below 1, twice times 0.5.
    // Two passes: each side's error is at most the bound of one sum of 2p terms (+ 2 for the
    // scaling and the adding to what is there).
    const int64_t n = 3 * c.kH * c.kW, p = y.numel() / 5;
    const double w = 1 / std::sqrt(static_cast<double>(n));
    REQUIRE(nn::test::maxAbsDiff(yOn, y) <= kind.tolerance(twoOrdersBound(n + 1, (n + 1) * w)));
    REQUIRE(nn::test::maxAbsDiff(tested->gradInput, reference.gradInput) <=
            kind.tolerance(twoOrdersBound(5 * c.kH * c.kW, 5 * c.kH * c.kW * w)));
    REQUIRE(nn::test::maxAbsDiff(tested->gradWeight, reference.gradWeight) <=
            kind.tolerance(twoOrdersBound(2 * p + 2, p)));
    REQUIRE(nn::test::maxAbsDiff(tested->gradBias, reference.gradBias) <= kind.tolerance(twoOrdersBound(2 * p + 2, p)));
    // A strided view of the device's memory is made contiguous there (the backend's strided
    // copy): the same output as from the contiguous copy made on the host.
    if (c.strided) REQUIRE(tested->forward(stored.to(device).transpose(2, 3)).toVector() == yOn.toVector());
  }
}
