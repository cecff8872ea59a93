// nn::SpatialConvolution with groups (PyTorch's Conv2d(groups=...)): hand-derived values, each
// group equal to an ungrouped convolution of its planes, finite differences, PyTorch's values
// (tests/reference/GroupedConvolutionReference.h, from tests/reference/make_grouped_convolution_reference.py: exact
// values whose products and sums are exact, so every device meets them to the bit), depthwise
// layers, errors, clone, save and load (and a file written before groups loading ungrouped), the
// CPU's unfolded route for every grouped layer and its results on several compute threads. On
// CPU devices and, where found, CUDA devices.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <vector>

#include "nn/io/Serialize.h"
#include "nn/modules/SpatialConvolution.h"
#include "nn/runtime/ComputeThreads.h"
#include "nn/tensor/Random.h"
#include "tests/support/ActivationChecks.h"
#include "tests/support/DeviceTest.h"
#include "tests/support/GradCheck.h"
#include "tests/reference/GroupedConvolutionReference.h"
#include "tests/support/Routes.h"

using nn::Tensor;

namespace {

// SpatialConvolution's options: kW x kH kernel, stride d, padding pad on both axes, in `groups` groups.
nn::SpatialConvolution::Options grouped(int64_t in, int64_t out, int64_t kW, int64_t kH, int64_t d, int64_t pad,
                                        int64_t groups) {
  nn::SpatialConvolution::Options o;
  o.nInputPlane = in;
  o.nOutputPlane = out;
  o.kW = kW;
  o.kH = kH;
  o.dW = o.dH = d;
  o.padW = o.padH = pad;
  o.groups = groups;
  return o;
}

// The worst rounding error of a float sum of `terms` terms whose magnitudes add up to at most
// `magnitude`, in any order, twice (two computations in different orders): as
// tests/modules/convolution_test.cpp's.
double twoOrdersBound(int64_t terms, double magnitude) {
  const double u = std::ldexp(1.0, -24), nu = static_cast<double>(terms + 1) * u;
  return 2 * nu / (1 - nu) * magnitude;
}

}  // namespace

NN_DEVICE_TEST_CASE("SpatialConvolution in groups matches hand-computed values", "[SpatialConvolution][groups]") {
  // 1x1, 4 -> 2 planes in 2 groups: output plane 0 sees input planes 0 and 1, output plane 1
  // planes 2 and 3. weight [2, 2, 1, 1] = {1, 2, 3, 4}, bias {0.5, -1}; input planes [1, 2],
  // [3, 4], [5, 6], [7, 8]: out0 = 1 [1, 2] + 2 [3, 4] + 0.5 = [7.5, 10.5], out1 = 3 [5, 6] +
  // 4 [7, 8] - 1 = [42, 49].
  nn::SpatialConvolution pointwise(grouped(4, 2, 1, 1, 1, 0, 2));
  REQUIRE(pointwise.weight.sizes() == std::vector<int64_t>{2, 2, 1, 1});
  REQUIRE(pointwise.bias.sizes() == std::vector<int64_t>{2});
  pointwise.weight.copy_(Tensor::fromVector({2, 2, 1, 1}, {1, 2, 3, 4}));
  pointwise.bias.copy_(Tensor::fromVector({2}, {0.5f, -1}));
  pointwise.to(kind.device());
  const Tensor x = kind.on(nn::test::counting({1, 4, 1, 2}));
  REQUIRE(pointwise.forward(x).toVector() == std::vector<float>{7.5f, 10.5f, 42, 49});
  // g = [1, -1] and [2, 0.5]: each input plane gets its filter's tap times its group's g:
  // 1 [1, -1], 2 [1, -1], 3 [2, 0.5], 4 [2, 0.5]. gradWeight: each plane dotted with its group's
  // g: [1, 2].[1, -1] = -1, [3, 4].[1, -1] = -1, [5, 6].[2, 0.5] = 13, [7, 8].[2, 0.5] = 18;
  // gradBias: 1 - 1 = 0, 2 + 0.5 = 2.5.
  const Tensor g = kind.on(Tensor::fromVector({1, 2, 1, 2}, {1, -1, 2, 0.5f}));
  pointwise.zeroGradParameters();
  REQUIRE(pointwise.backward(x, g).toVector() == std::vector<float>{1, -1, 2, -2, 6, 1.5f, 8, 2});
  REQUIRE(pointwise.gradWeight.toVector() == std::vector<float>{-1, -1, 13, 18});
  REQUIRE(pointwise.gradBias.toVector() == std::vector<float>{0, 2.5f});

  // Depthwise 3x3 with padding 1, 2 planes in 2 groups: a box of ones on plane 0 (1..9), the
  // identity (the centre tap) on plane 1 (10, 20, .., 90), which sees nothing of plane 0.
  // Plane 0's output is each cell's 3x3 neighbourhood sum: corners 1 + 2 + 4 + 5 = 12, ...
  nn::SpatialConvolution depthwise(grouped(2, 2, 3, 3, 1, 1, 2));
  REQUIRE(depthwise.toString() == "nn.SpatialConvolution(2 -> 2, 3x3, 1,1, 1,1, groups=2)");
  std::vector<float> w(18, 0.f);
  for (int i = 0; i < 9; ++i) w[i] = 1;
  w[9 + 4] = 1;
  depthwise.weight.copy_(Tensor::fromVector({2, 1, 3, 3}, w));
  depthwise.bias.zero_();
  depthwise.to(kind.device());
  std::vector<float> planes = nn::test::counting({9}).toVector();
  for (int i = 1; i <= 9; ++i) planes.push_back(10.f * i);
  const Tensor x2 = kind.on(Tensor::fromVector({2, 3, 3}, planes));
  const std::vector<float> boxSums{12, 21, 16, 27, 45, 33, 24, 39, 28};
  std::vector<float> expected = boxSums;
  for (int i = 1; i <= 9; ++i) expected.push_back(10.f * i);
  REQUIRE(depthwise.forward(x2).toVector() == expected);
  // gradOutput 1 on plane 0, 2 on plane 1: plane 0's cells get the number of windows that read
  // them (4 at corners, 6 on edges, 9 at the centre), plane 1's the centre tap's 2. Tap (ky, kx)
  // of plane 0 sums the cells it reads, which are the box sums again; plane 1's taps read 10
  // times plane 0's numbers, times g = 2: 20 times the box sums. gradBias: 9 and 18.
  const Tensor g2 = kind.on(Tensor::fromVector({2, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2}));
  depthwise.zeroGradParameters();
  REQUIRE(depthwise.backward(x2, g2).toVector() ==
          std::vector<float>{4, 6, 4, 6, 9, 6, 4, 6, 4, 2, 2, 2, 2, 2, 2, 2, 2, 2});
  std::vector<float> gradWeight = boxSums;
  for (float s : boxSums) gradWeight.push_back(20 * s);
  REQUIRE(depthwise.gradWeight.toVector() == gradWeight);
  REQUIRE(depthwise.gradBias.toVector() == std::vector<float>{9, 18});
}

NN_DEVICE_TEST_CASE("SpatialConvolution in groups is each group's ungrouped convolution of its planes",
                    "[SpatialConvolution][groups]") {
  struct Case {
    const char* name;
    int64_t in, out, kW, kH, d, pad, groups, batch, size;
  };
  // Outputs below 256 positions (one GEMM for a chunk of samples) and above (one per sample),
  // strided, padded, 1x1, depthwise and depthwise with two filters a plane; 32 -> 32 planes
  // 3x3 of stride 1 on 16x16 are a shape the Winograd route takes without groups.
  const std::vector<Case> cases = {
      {"3x3 stride 2 pad 1, 3 groups", 6, 9, 3, 3, 2, 1, 3, 3, 9},
      {"5x3 stride 1, 2 groups, wide planes", 4, 6, 5, 3, 1, 0, 2, 2, 20},
      {"1x1, 2 groups", 4, 4, 1, 1, 1, 0, 2, 5, 6},
      {"depthwise 3x3 pad 1", 8, 8, 3, 3, 1, 1, 8, 2, 7},
      {"depthwise 3x3 stride 2 pad 1, 2 filters a plane", 3, 6, 3, 3, 2, 1, 3, 3, 11},
      {"3x3 pad 1, 2 groups of 16", 32, 32, 3, 3, 1, 1, 2, 2, 16},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    nn::manualSeed(21);
    nn::SpatialConvolution conv(grouped(c.in, c.out, c.kW, c.kH, c.d, c.pad, c.groups));
    conv.to(kind.device());
    const Tensor x = kind.on(nn::test::randomTensor({c.batch, c.in, c.size, c.size}, 22));
    conv.zeroGradParameters();
    const Tensor y = conv.forward(x).clone();
    const Tensor g = kind.on(nn::test::randomTensor(y.sizes(), 23));
    const Tensor gi = conv.backward(x, g, 0.5f).clone();
    const int64_t in = c.in / c.groups, out = c.out / c.groups;
    // Each value sums the same products in both, perhaps in other orders (another route for the
    // ungrouped layer, other chunks): an output n = in kH kW products of |x| < 1 and
    // |w| <= 1 / sqrt(n) and the bias, an input cell at most out kH kW products, a weight or bias
    // gradient the batch's positions (|g| < 1), times 0.5.
    const int64_t n = in * c.kH * c.kW, p = y.numel() / c.out;
    const double w = 1 / std::sqrt(static_cast<double>(n));
    for (int64_t group = 0; group < c.groups; ++group) {
      CAPTURE(group);
      nn::SpatialConvolution alone(in, out, c.kW, c.kH, c.d, c.d, c.pad, c.pad);
      alone.weight.copy_(conv.weight.to(nn::Device()).narrow(0, group * out, out));
      alone.bias.copy_(conv.bias.to(nn::Device()).narrow(0, group * out, out));
      alone.to(kind.device());
      alone.zeroGradParameters();
      const Tensor xg = x.narrow(1, group * in, in).contiguous();
      CHECK(nn::test::maxAbsDiff(alone.forward(xg), y.narrow(1, group * out, out)) <=
            twoOrdersBound(n + 1, (n + 1) * w));
      CHECK(nn::test::maxAbsDiff(alone.backward(xg, g.narrow(1, group * out, out).contiguous(), 0.5f),
                                 gi.narrow(1, group * in, in)) <= twoOrdersBound(out * c.kH * c.kW, out * c.kH * c.kW * w));
      CHECK(nn::test::maxAbsDiff(alone.gradWeight, conv.gradWeight.narrow(0, group * out, out)) <=
            twoOrdersBound(p + 1, p));
      CHECK(nn::test::maxAbsDiff(alone.gradBias, conv.gradBias.narrow(0, group * out, out)) <=
            twoOrdersBound(p + 1, p));
    }
  }
}

NN_DEVICE_TEST_CASE("SpatialConvolution in groups agrees with finite differences", "[SpatialConvolution][groups]") {
  nn::manualSeed(31);
  nn::SpatialConvolution strided(grouped(4, 6, 2, 3, 2, 1, 2));
  nn::SpatialConvolution depthwise(grouped(3, 6, 3, 3, 1, 1, 3));
  for (nn::SpatialConvolution* conv : {&strided, &depthwise}) {
    CAPTURE(conv->toString());
    conv->to(kind.device());
    const Tensor x = kind.on(nn::test::randomTensor({2, conv->options().nInputPlane, 5, 6}, 32));
    REQUIRE_THAT(nn::test::checkInputGradient(*conv, x), nn::test::AgreesWithin(1e-3));
    REQUIRE_THAT(nn::test::checkParameterGradients(*conv, x), nn::test::EachAgreesWithin(1e-3, 2));
  }
}

NN_DEVICE_TEST_CASE("SpatialConvolution in groups matches PyTorch's conv2d(groups=) to the bit",
                    "[SpatialConvolution][groups]") {
  struct Case {
    nn::SpatialConvolution::Options options;
    std::vector<int64_t> sizes;
    const std::vector<float>&output, &gradInput, &gradWeight, &gradBias;
  };
  using namespace nn::test;
  // The script's conv2d(stride=(2, 1), padding=(1, 1), groups=2) and conv2d(stride=2,
  // padding=1, groups=3).
  nn::SpatialConvolution::Options groups2 = grouped(4, 6, 2, 3, 1, 1, 2);
  groups2.dH = 2;
  const std::vector<Case> cases = {
      {groups2, {2, 4, 6, 7}, kTorchGrouped, kTorchGroupedGradInput, kTorchGroupedGradWeight, kTorchGroupedGradBias},
      {grouped(3, 6, 3, 3, 2, 1, 3), {2, 3, 7, 6}, kTorchDepthwise, kTorchDepthwiseGradInput,
       kTorchDepthwiseGradWeight, kTorchDepthwiseGradBias},
  };
  for (const Case& c : cases) {
    nn::SpatialConvolution conv(c.options);
    CAPTURE(conv.toString());
    conv.weight.copy_(exactValues(conv.weight.sizes(), 3, 7, 3, 4));
    conv.bias.copy_(exactValues(conv.bias.sizes(), 2, 5, 2, 2));
    conv.to(kind.device());
    conv.zeroGradParameters();
    const Tensor x = kind.on(exactValues(c.sizes, 5, 17, 8, 8));
    const Tensor& y = conv.forward(x);
    CHECK(y.toVector() == c.output);
    const Tensor g = kind.on(exactValues(y.sizes(), 7, 13, 6, 4));
    CHECK(conv.backward(x, g).toVector() == c.gradInput);
    CHECK(conv.gradWeight.toVector() == c.gradWeight);
    CHECK(conv.gradBias.toVector() == c.gradBias);
  }
}

NN_DEVICE_TEST_CASE("SpatialConvolution refuses groups that do not divide its planes, naming them",
                    "[SpatialConvolution][groups]") {
  CHECK_THROWS_WITH(nn::SpatialConvolution(grouped(6, 4, 3, 3, 1, 1, 4)),
                    Catch::Contains("nn.SpatialConvolution") && Catch::Contains("6 -> 4 planes in 4 groups"));
  CHECK_THROWS_WITH(nn::SpatialConvolution(grouped(4, 6, 3, 3, 1, 1, 4)),
                    Catch::Contains("nn.SpatialConvolution") && Catch::Contains("4 -> 6 planes in 4 groups"));
  CHECK_THROWS_WITH(nn::SpatialConvolution(grouped(4, 4, 3, 3, 1, 1, 0)), Catch::Contains("in 0 groups"));
  CHECK_THROWS_WITH(nn::SpatialConvolution(grouped(4, 4, 3, 3, 1, 1, -2)), Catch::Contains("in -2 groups"));
  nn::SpatialConvolution::Options dilated = grouped(3, 3, 3, 3, 1, 1, 2);
  dilated.dilW = dilated.dilH = 2;
  CHECK_THROWS_WITH(nn::SpatialDilatedConvolution(dilated), Catch::Contains("nn.SpatialDilatedConvolution") &&
                                                                 Catch::Contains("3 -> 3 planes in 2 groups"));
  // The input's planes are all the groups' planes.
  nn::SpatialConvolution conv(grouped(4, 6, 3, 3, 1, 1, 2));
  conv.to(kind.device());
  CHECK_THROWS_WITH(conv.forward(Tensor::zeros({1, 2, 5, 5}, kind.device())),
                    Catch::Contains("nn.SpatialConvolution(4 -> 6, 3x3, 1,1, 1,1, groups=2)") &&
                        Catch::Contains("[batch, 4, height, width]"));
}

NN_DEVICE_TEST_CASE("SpatialConvolution keeps its groups through clone, save and load",
                    "[SpatialConvolution][groups]") {
  nn::manualSeed(41);
  nn::SpatialConvolution conv(grouped(32, 32, 3, 3, 1, 1, 32));
  REQUIRE(conv.toString() == "nn.SpatialConvolution(32 -> 32, 3x3, 1,1, 1,1, groups=32)");
  REQUIRE(conv.weight.sizes() == std::vector<int64_t>{32, 1, 3, 3});
  // Initialised as PyTorch's: within 1 / sqrt(kW kH nInputPlane / groups) = 1/3, the planes a
  // filter sees.
  for (float v : conv.weight.toVector()) REQUIRE(std::fabs(v) <= 1.f / 3);
  conv.to(kind.device());
  const Tensor x = kind.on(nn::test::randomTensor({2, 32, 6, 5}, 42));
  const std::vector<float> y = conv.forward(x).toVector();
  for (const nn::ModulePtr& copy : {conv.clone(), nn::test::savedAndLoaded(conv)}) {
    auto typed = std::dynamic_pointer_cast<nn::SpatialConvolution>(copy);
    REQUIRE(typed);
    CHECK(typed->toString() == conv.toString());
    CHECK(typed->options().groups == 32);
    CHECK(typed->weight.sizes() == conv.weight.sizes());
    typed->to(kind.device());
    CHECK(typed->forward(x).toVector() == y);
  }
}

TEST_CASE("a SpatialConvolution written before groups loads ungrouped", "[SpatialConvolution][groups]") {
  // tests/fixtures/every-module-before-options.safetensors was written before the option existed;
  // its first module is nn.SpatialConvolution(1 -> 3, 3x2, 2,1, 1,0) (tests/io/serialize_test.cpp).
  const nn::ModulePtr loaded = nn::load("tests/fixtures/every-module-before-options.safetensors");
  std::shared_ptr<nn::SpatialConvolution> conv;
  for (const nn::ModulePtr& m : loaded->listModules())
    if (!conv) conv = std::dynamic_pointer_cast<nn::SpatialConvolution>(m);
  REQUIRE(conv);
  CHECK(conv->toString() == "nn.SpatialConvolution(1 -> 3, 3x2, 2,1, 1,0)");
  CHECK(conv->options().groups == 1);
  CHECK(conv->weight.sizes() == std::vector<int64_t>{3, 1, 2, 3});
}

TEST_CASE("SpatialConvolution in groups takes the unfolded route on the CPU", "[SpatialConvolution][groups]") {
  // Without groups each of these shapes takes another route at some level: 4 -> 32 planes 3x3
  // the shallow route's forward, 32 -> 32 3x3 on 16x16 Winograd's, 32 -> 32 3x3 on 7x7 the
  // direct route's. With groups, every pass is the unfolded route's.
  struct Case {
    int64_t in, out, size, groups;
  };
  for (const Case& c : {Case{4, 32, 12, 2}, Case{32, 32, 16, 2}, Case{32, 32, 7, 32}}) {
    CAPTURE(c.in, c.out, c.size, c.groups);
    nn::SpatialConvolution conv(grouped(c.in, c.out, 3, 3, 1, 1, c.groups));
    const Tensor x = nn::test::randomTensor({2, c.in, c.size, c.size}, 51);
    const Tensor g = nn::test::randomTensor({2, c.out, c.size, c.size}, 52);
    const nn::test::RouteWatch unfolded(nn::cpu::Route::convolutionUnfolded);
    conv.forward(x);
    conv.backward(x, g);
    CHECK(unfolded.ran(nn::cpu::Pass::forward) == 1);
    CHECK(unfolded.ran(nn::cpu::Pass::gradInput) == 1);
    CHECK(unfolded.ran(nn::cpu::Pass::gradParameters) == 1);
  }
}

TEST_CASE("SpatialConvolution in groups gives the same outputs and input gradients on any number of compute threads",
          "[SpatialConvolution][groups]") {
  // Batches of 9 and 5 samples cut into parts of whole chunks (one chunk of 9, chunks of 2, 2
  // and 1), each sample's GEMMs the same whatever the part. The weight and bias gradients of
  // the parts are summed apart and added in part order, as for an ungrouped layer: the same
  // terms, grouped otherwise by other thread counts, within the rounding of a sum of the
  // batch's positions (|x|, |g| < 1).
  struct Passes {
    std::vector<float> output, gradInput, gradWeight, gradBias;
  };
  const auto passes = [](nn::SpatialConvolution& conv, const Tensor& x) {
    conv.zeroGradParameters();
    Passes r;
    r.output = conv.forward(x).toVector();
    r.gradInput = conv.backward(x, nn::test::randomTensor(conv.output.sizes(), 62)).toVector();
    r.gradWeight = conv.gradWeight.toVector();
    r.gradBias = conv.gradBias.toVector();
    return r;
  };
  nn::manualSeed(61);
  nn::SpatialConvolution narrow(grouped(12, 18, 3, 3, 1, 1, 3));
  nn::SpatialConvolution wide(grouped(8, 8, 3, 3, 1, 1, 8));
  const Tensor xn = nn::test::randomTensor({9, 12, 8, 8}, 63), xw = nn::test::randomTensor({5, 8, 20, 20}, 64);
  nn::setNumThreads(1);
  for (nn::SpatialConvolution* conv : {&narrow, &wide}) {
    CAPTURE(conv->toString());
    const Tensor& x = conv == &narrow ? xn : xw;
    const Passes one = passes(*conv, x);
    const int64_t positions = x.size(0) * x.size(2) * x.size(3);
    for (int threads : {2, 3}) {
      CAPTURE(threads);
      nn::setNumThreads(threads);
      const Passes more = passes(*conv, x);
      CHECK(more.output == one.output);
      CHECK(more.gradInput == one.gradInput);
      CHECK(nn::test::maxAbsDiff(Tensor::fromVector({static_cast<int64_t>(one.gradWeight.size())}, one.gradWeight),
                                 more.gradWeight) <= twoOrdersBound(positions + threads, positions));
      CHECK(nn::test::maxAbsDiff(Tensor::fromVector({static_cast<int64_t>(one.gradBias.size())}, one.gradBias),
                                 more.gradBias) <= twoOrdersBound(positions + threads, positions));
      nn::setNumThreads(1);
    }
  }
}

NN_DEVICE_TEST_CASE("SpatialConvolution in groups on another device gives the host's results",
                    "[SpatialConvolution][groups]") {
  // From cpu:0 to cpu:1 the same kernels: the same bits. On CUDA cuDNN sums an output's 2 x 9
  // products (|w| <= 1 / sqrt(18)) and the bias, an input cell's 3 x 9 and a parameter gradient's
  // 2 x 25 positions in other orders.
  const nn::Device device = kind.compared();
  nn::manualSeed(71);
  auto conv = std::make_shared<nn::SpatialConvolution>(grouped(4, 6, 3, 3, 2, 1, 2));
  const Tensor x = nn::test::randomTensor({2, 4, 9, 10}, 72);
  const Tensor g = nn::test::randomTensor({2, 6, 5, 5}, 73);
  conv->zeroGradParameters();
  const Tensor y = conv->forward(x).clone();
  const Tensor gi = conv->backward(x, g).clone();
  const nn::ModulePtr tested = conv->clone();
  tested->to(device);
  tested->zeroGradParameters();
  const double w = 1 / std::sqrt(18.0);
  REQUIRE(nn::test::maxAbsDiff(tested->forward(x.to(device)), y) <= kind.tolerance(twoOrdersBound(19, 19 * w)));
  REQUIRE(nn::test::maxAbsDiff(tested->backward(x.to(device), g.to(device)), gi) <=
          kind.tolerance(twoOrdersBound(27, 27 * w)));
  const std::vector<Tensor> gradients = tested->parameters().second;
  REQUIRE(nn::test::maxAbsDiff(gradients[0], conv->gradWeight) <= kind.tolerance(twoOrdersBound(51, 50)));
  REQUIRE(nn::test::maxAbsDiff(gradients[1], conv->gradBias) <= kind.tolerance(twoOrdersBound(51, 50)));
}
