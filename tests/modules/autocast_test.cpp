// The autocast scope (nn/runtime/Autocast.h) on the CPU: its nesting; Linear's and
// SpatialConvolution's forward and backward passes inside a bfloat16 or float16 scope against
// their float32 results, within what rounding each operand to the narrow type allows:
// |err| <= (2u + u^2) sum|a_i b_i| for the unit roundoff u (bfloat16 2^-8, float16 2^-11) plus
// float32's rounding of the reduction, (len + 4) 2^-24 sum|a_i b_i|, on both sides; the route
// test: each result within float32's rounding of the sum of the rounded operands, and, somewhere,
// farther from the un-rounded sum than float32's rounding reaches, which fails where the products
// were float32's; the modules that stay float32 giving the same floats inside the scope; and the
// replicas of a DataParallelTable on cpu:0 and cpu:1, and a device's compute threads, taking the
// scope of the thread that calls forward and backward. bfloat16's cases need AVX512-BF16 at the
// kernels' level avx512 and are skipped (counted) elsewhere, where the products stay float32;
// float16 rounds its operands on every CPU.
#include "nn/runtime/Autocast.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "nn/cpu/AmxGemm.h"
#include "nn/cpu/AmxTaps.h"
#include "nn/cpu/Bf16Gemm.h"
#include "nn/cpu/Isa.h"
#include "nn/math/Half.h"
#include "nn/nn.h"
#include "nn/parallel/DataParallelTable.h"
#include "tests/support/GradCheck.h"
#include "tests/support/Routes.h"
#include "tests/support/Skip.h"

using nn::Autocast;
using nn::DType;
using nn::Tensor;
using nn::cpu::Pass;
using nn::cpu::Route;

namespace {

// x rounded to `type` and widened back.
float rounded(float x, DType type) {
  if (type == DType::BFloat16) return nn::math::bfloat16ToFloat(nn::math::floatToBfloat16(x));
  if (type == DType::Float16) return nn::math::halfToFloat(nn::math::floatToHalf(x));
  return x;
}

// The unit roundoff of `type`'s significand: half its spacing at 1.
double unitRoundoff(DType type) { return type == DType::BFloat16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11); }

// One product's sums, element by element, in double: of the exact terms, of the terms of the
// operands rounded to the scope's type, and of the terms' magnitudes.
struct Sums {
  Sums(size_t n, DType type) : exact(n), narrow(n), magnitude(n), type(type) {}
  void add(size_t i, float a, float b) {
    exact[i] += double{a} * b;
    narrow[i] += double{rounded(a, type)} * rounded(b, type);
    magnitude[i] += std::fabs(double{a} * b);
  }
  std::vector<double> exact, narrow, magnitude;
  DType type;
};

// Checks a pass's result inside the scope (`scoped`) and outside it (`plain`) against `sums`, of
// reductions of `length` terms: both within the derived bound of each other, the scoped one within
// float32's rounding of the narrow sum and, for some element, farther from the exact sum than
// float32's rounding reaches (the narrow route ran).
void checkPass(const char* pass, const std::vector<float>& scoped, const std::vector<float>& plain, const Sums& sums,
               int64_t length) {
  CAPTURE(pass, length);
  REQUIRE(scoped.size() == sums.exact.size());
  REQUIRE(plain.size() == sums.exact.size());
  const double u = unitRoundoff(sums.type);
  const double float32 = std::ldexp(static_cast<double>(length + 4), -24);
  // float16's subnormals (below 2^-14) are rounded to 2^-25 absolute: each term of operands within
  // [-1, 1] off by at most that much twice.
  const double subnormal = sums.type == DType::Float16 ? std::ldexp(2.0 * static_cast<double>(length), -25) : 0;
  double worstNarrow = 0, worstGap = 0, farthest = 0;
  for (size_t i = 0; i < scoped.size(); ++i) {
    const double m = sums.magnitude[i];
    const double ownBound = float32 * m + 1e-30;
    worstNarrow = std::max(worstNarrow, std::fabs(scoped[i] - sums.narrow[i]) / ownBound);
    farthest = std::max(farthest, std::fabs(scoped[i] - sums.exact[i]) / ownBound);
    const double bound = (2 * u + u * u) * m + 2 * float32 * m + subnormal + 1e-30;
    worstGap = std::max(worstGap, std::fabs(double{scoped[i]} - plain[i]) / bound);
  }
  CHECK(worstGap <= 1);
  CHECK(worstNarrow <= 1);
  CHECK(farthest > 1);
}

// Skips the running test case where bfloat16 products do not run here.
#define REQUIRE_BF16_PRODUCTS()                                                         \
  do {                                                                                  \
    if (const std::string why = nn::cpu::bf16GemmMissing(); !why.empty()) NN_SKIP(why); \
  } while (0)

// The three passes of a module on x and gradOutput, as float vectors: output, gradInput, and the
// weight gradient (zeroed first), in the calling thread's scope.
struct Passes {
  std::vector<float> output, gradInput, gradWeight, gradBias;
};
template <typename M>
Passes runPasses(M& module, const Tensor& x, const Tensor& gradOutput) {
  module.zeroGradParameters();
  Passes p;
  p.output = module.forward(x).toVector();
  p.gradInput = module.backward(x, gradOutput).toVector();
  p.gradWeight = module.gradWeight.toVector();
  p.gradBias = module.gradBias.toVector();
  return p;
}

// Linear [batch, in] -> [batch, out] inside a scope of `type` against float32.
void checkLinear(DType type, int64_t batch, int64_t in, int64_t out) {
  CAPTURE(nn::dtypeName(type), batch, in, out);
  nn::manualSeed(7);
  nn::Linear linear(in, out);
  const Tensor x = nn::test::randomTensor({batch, in}, 11);
  const Tensor gy = nn::test::randomTensor({batch, out}, 12);
  const Passes plain = runPasses(linear, x, gy);
  const nn::test::RouteWatch gemm(Route::linearBlas);
  Passes scoped;
  {
    Autocast scope(type);
    scoped = runPasses(linear, x, gy);
  }
  CHECK(gemm.ran(Pass::forward) == 1);
  CHECK(gemm.ran(Pass::gradInput) == 1);
  CHECK(gemm.ran(Pass::gradParameters) == 1);
  const std::vector<float> xv = x.toVector(), gv = gy.toVector(), w = linear.weight.toVector(),
                           b = linear.bias.toVector();
  Sums y(static_cast<size_t>(batch * out), type), gx(static_cast<size_t>(batch * in), type),
      gw(static_cast<size_t>(out * in), type);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < out; ++o)
      for (int64_t k = 0; k < in; ++k) {
        const float xk = xv[n * in + k], wk = w[o * in + k], g = gv[n * out + o];
        y.add(n * out + o, xk, wk);
        gx.add(n * in + k, g, wk);
        gw.add(o * in + k, g, xk);
      }
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < out; ++o) {
      const size_t i = n * out + o;
      y.exact[i] += b[o];
      y.narrow[i] += b[o];
      y.magnitude[i] += std::fabs(b[o]);
    }
  checkPass("forward", scoped.output, plain.output, y, in + 1);
  checkPass("gradInput", scoped.gradInput, plain.gradInput, gx, out);
  checkPass("gradWeight", scoped.gradWeight, plain.gradWeight, gw, batch);
  // The bias gradient is a sum, not a product: float32's own.
  CHECK(scoped.gradBias == plain.gradBias);
}

// A convolution of `groups` groups, padded by `pad`, of stride `stride`, inside a scope of `type` against
// float32; shapes that take the unfolded (GEMM) route in all three passes inside the scope.
void checkConvolution(DType type, int64_t batch, int64_t inPlanes, int64_t outPlanes, int64_t k, int64_t size,
                      int64_t groups, int64_t pad = 0, int64_t stride = 1) {
  CAPTURE(nn::dtypeName(type), batch, inPlanes, outPlanes, k, size, groups, pad, stride);
  nn::SpatialConvolutionOptions options;
  options.nInputPlane = inPlanes;
  options.nOutputPlane = outPlanes;
  options.kW = options.kH = k;
  options.dW = options.dH = stride;
  options.padW = options.padH = pad;
  options.groups = groups;
  nn::manualSeed(9);
  nn::SpatialConvolution convolution(options);
  const int64_t outSize = (size + 2 * pad - k) / stride + 1, inGroup = inPlanes / groups, outGroup = outPlanes / groups;
  const Tensor x = nn::test::randomTensor({batch, inPlanes, size, size}, 21);
  const Tensor gy = nn::test::randomTensor({batch, outPlanes, outSize, outSize}, 22);
  const Passes plain = runPasses(convolution, x, gy);
  const nn::test::RouteWatch unfolded(Route::convolutionUnfolded);
  Passes scoped;
  {
    Autocast scope(type);
    scoped = runPasses(convolution, x, gy);
  }
  CHECK(unfolded.ran(Pass::forward) == 1);
  CHECK(unfolded.ran(Pass::gradInput) == 1);
  CHECK(unfolded.ran(Pass::gradParameters) == 1);
  const std::vector<float> xv = x.toVector(), gv = gy.toVector(), w = convolution.weight.toVector(),
                           b = convolution.bias.toVector();
  Sums y(gv.size(), type), gx(xv.size(), type), gw(w.size(), type);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < outPlanes; ++o)
      for (int64_t oy = 0; oy < outSize; ++oy)
        for (int64_t ox = 0; ox < outSize; ++ox) {
          const size_t yi = static_cast<size_t>(((n * outPlanes + o) * outSize + oy) * outSize + ox);
          for (int64_t c = 0; c < inGroup; ++c) {
            const int64_t plane = (o / outGroup) * inGroup + c;
            for (int64_t ky = 0; ky < k; ++ky)
              for (int64_t kx = 0; kx < k; ++kx) {
                const int64_t iy = oy * stride + ky - pad, ix = ox * stride + kx - pad;
                if (iy < 0 || iy >= size || ix < 0 || ix >= size) continue;  // padding: no term
                const size_t xi = static_cast<size_t>(((n * inPlanes + plane) * size + iy) * size + ix);
                const size_t wi = static_cast<size_t>(((o * inGroup + c) * k + ky) * k + kx);
                y.add(yi, xv[xi], w[wi]);
                gx.add(xi, gv[yi], w[wi]);
                gw.add(wi, gv[yi], xv[xi]);
              }
          }
          y.exact[yi] += b[o];
          y.narrow[yi] += b[o];
          y.magnitude[yi] += std::fabs(b[o]);
        }
  checkPass("forward", scoped.output, plain.output, y, inGroup * k * k + 1);
  // An input element's gradient sums at most outGroup * k * k terms, a weight's batch * outSize^2.
  checkPass("gradInput", scoped.gradInput, plain.gradInput, gx, outGroup * k * k);
  checkPass("gradWeight", scoped.gradWeight, plain.gradWeight, gw, batch * outSize * outSize);
  CHECK(scoped.gradBias == plain.gradBias);
}

}  // namespace

TEST_CASE("An autocast scope belongs to its thread, nests, and a float32 or disabled scope turns it off",
          "[autocast]") {
  CHECK(nn::autocastType() == DType::Float32);
  CHECK_FALSE(nn::autocastEnabled());
  {
    Autocast outer(DType::BFloat16);
    CHECK(nn::autocastType() == DType::BFloat16);
    CHECK(nn::autocastEnabled());
    {
      Autocast off(DType::Float32);
      CHECK(nn::autocastType() == DType::Float32);
      {
        Autocast half(DType::Float16);
        CHECK(nn::autocastType() == DType::Float16);
        Autocast disabled(DType::BFloat16, false);
        CHECK(disabled.type() == DType::Float32);
        CHECK(nn::autocastType() == DType::Float32);
      }
      CHECK(nn::autocastType() == DType::Float32);
    }
    CHECK(nn::autocastType() == DType::BFloat16);
    DType other = DType::Float16;
    std::thread([&] { other = nn::autocastType(); }).join();
    CHECK(other == DType::Float32);
  }
  CHECK(nn::autocastType() == DType::Float32);
  CHECK(nn::autocastNamed("bf16") == DType::BFloat16);
  CHECK(nn::autocastNamed("fp16") == DType::Float16);
  CHECK(nn::autocastNamed("off") == DType::Float32);
  CHECK_THROWS_WITH(nn::autocastNamed("fp8"), Catch::Contains("bf16, fp16 or off") && Catch::Contains("'fp8'"));
}

TEST_CASE("Linear's passes in a bfloat16 scope: bfloat16 products within their bound of float32's", "[autocast]") {
  REQUIRE_BF16_PRODUCTS();
  // A training batch (the direct route's tiles outside the scope), a small one, odd inputs.
  checkLinear(DType::BFloat16, 64, 301, 70);
  checkLinear(DType::BFloat16, 5, 77, 40);
}

TEST_CASE("Linear's passes in a float16 scope: float16 operands within their bound of float32's", "[autocast]") {
  checkLinear(DType::Float16, 64, 301, 70);
  checkLinear(DType::Float16, 5, 77, 40);
}

TEST_CASE("Convolutions' passes in a bfloat16 scope: bfloat16 products within their bound of float32's", "[autocast]") {
  REQUIRE_BF16_PRODUCTS();
  // LeNet's second layer, smaller; a grouped layer.
  checkConvolution(DType::BFloat16, 3, 6, 16, 5, 12, 1);
  checkConvolution(DType::BFloat16, 2, 4, 6, 3, 9, 2);
}

TEST_CASE("3x3 convolutions that take Winograd's route in float32 take AMX's GEMMs in a bfloat16 scope", "[autocast]") {
  REQUIRE_BF16_PRODUCTS();
  if (!nn::cpu::amxGemmRuns()) NN_SKIP(nn::cpu::amxGemmMissing());
  // VGG's 3x3 padded layers (float32: Winograd's route, the direct route's weight gradient where
  // the output planes are a multiple of 32), smaller: a sample's columns within 1 MB; 32 -> 32
  // planes on 32x32 (1.2 MB a sample: a chunk of one sample's planes); 16 -> 48 (the gradInput
  // as the forward of the turned kernels for its size alone); padded by 2
  // (the gradInput's layer unpadded). Their planes in and out are multiples of 16: the products
  // over the taps (AmxTaps.h), a call a chunk in each pass.
  const int64_t amxCalls = nn::cpu::amxGemmCalls(), tapsCalls = nn::cpu::amxTapsCalls();
  const nn::test::RouteWatch winograd(Route::convolutionWinograd);
  checkConvolution(DType::BFloat16, 2, 16, 32, 3, 16, 1, 1);
  checkConvolution(DType::BFloat16, 2, 32, 32, 3, 32, 1, 1);
  checkConvolution(DType::BFloat16, 2, 16, 48, 3, 32, 1, 1);
  checkConvolution(DType::BFloat16, 2, 32, 32, 3, 30, 1, 2);
  // The float32 runs beside them took it, forward and gradInput: the shapes are Winograd's.
  CHECK(winograd.ran(Pass::forward) == 4);
  CHECK(winograd.ran(Pass::gradInput) == 4);
  // A call a chunk in each pass: both samples in one on 16x16 planes (18 x 18 padded, three of
  // them within 1,024 floats), a chunk each on the others (34 x 34 padded).
  CHECK(nn::cpu::amxTapsCalls() - tapsCalls == 3 + 3 * 6);
  CHECK(nn::cpu::amxGemmCalls() == amxCalls);
  // 24 planes in, 40 out: not multiples of 16, amxGemmRows's products from the planes.
  checkConvolution(DType::BFloat16, 2, 24, 40, 3, 16, 1, 1);
  CHECK(winograd.ran(Pass::forward) == 5);
  CHECK(nn::cpu::amxGemmCalls() > amxCalls);
  CHECK(nn::cpu::amxTapsCalls() - tapsCalls == 3 + 3 * 6);
}

TEST_CASE("3x3 convolutions of stride 1 on small planes take AMX's GEMMs from their planes in a bfloat16 scope",
          "[autocast]") {
  REQUIRE_BF16_PRODUCTS();
  if (!nn::cpu::amxGemmRuns()) NN_SKIP(nn::cpu::amxGemmMissing());
  // A residual network's 7x7 and 14x14 layers (float32: the direct route in all three passes),
  // in chunks of 12 and 4 samples with a last chunk of fewer (13 = 12 + 1, 5 = 4 + 1).
  const nn::test::RouteWatch direct(Route::convolutionDirect);
  const int64_t tapsCalls = nn::cpu::amxTapsCalls();
  checkConvolution(DType::BFloat16, 13, 64, 64, 3, 7, 1, 1);
  checkConvolution(DType::BFloat16, 5, 32, 32, 3, 14, 1, 1);
  CHECK(direct.ran(Pass::forward) == 2);
  CHECK(direct.ran(Pass::gradInput) == 2);
  CHECK(direct.ran(Pass::gradParameters) == 2);
  // Two chunks a layer in each of the three passes: the products over the taps.
  CHECK(nn::cpu::amxTapsCalls() - tapsCalls == 2 * 3 * 2);
}

TEST_CASE("3x3 convolutions of stride 2 take AMX's products over the taps from their phases in a bfloat16 scope",
          "[autocast]") {
  REQUIRE_BF16_PRODUCTS();
  if (!nn::cpu::amxGemmRuns()) NN_SKIP(nn::cpu::amxGemmMissing());
  // A residual network's layers that halve its planes (float32: the direct route in all three
  // passes): 32 -> 64 from 14x14 (phases of 8x8, chunks of 16 samples: 20 = 16 + 4) and 16 -> 32
  // from 28x28 (phases of 15x15, chunks of 4: 5 = 4 + 1).
  const nn::test::RouteWatch direct(Route::convolutionDirect);
  const int64_t tapsCalls = nn::cpu::amxTapsCalls();
  checkConvolution(DType::BFloat16, 20, 32, 64, 3, 14, 1, 1, 2);
  checkConvolution(DType::BFloat16, 5, 16, 32, 3, 28, 1, 1, 2);
  CHECK(direct.ran(Pass::forward) == 2);
  CHECK(direct.ran(Pass::gradInput) == 2);
  CHECK(direct.ran(Pass::gradParameters) == 2);
  // Two chunks a layer: a call a chunk for the forward and the weight gradient, one a phase of
  // the gradInput for the gradInput.
  CHECK(nn::cpu::amxTapsCalls() - tapsCalls == 2 * 2 * (1 + 4 + 1));
  // The 1x1 layers of stride 2 keep the direct route: their phases measured slower.
  nn::SpatialConvolution pointwise(16, 32, 1, 1, 2, 2);
  const Tensor x = nn::test::randomTensor({2, 16, 14, 14}, 23), gy = nn::test::randomTensor({2, 32, 7, 7}, 24);
  const nn::test::RouteWatch directInScope(Route::convolutionDirect), unfolded(Route::convolutionUnfolded);
  {
    Autocast scope(DType::BFloat16);
    runPasses(pointwise, x, gy);
  }
  CHECK(directInScope.ran(Pass::forward) == 1);
  CHECK(unfolded.ran(Pass::forward) == 0);
}

TEST_CASE("On vdpbf16ps a bfloat16 scope's 3x3 convolutions keep Winograd's route", "[autocast]") {
  REQUIRE_BF16_PRODUCTS();
  // AMX held off: the unfolded route's products would run below Winograd's there.
  const bool previous = nn::cpu::allowAmx(false);
  nn::SpatialConvolution convolution(16, 16, 3, 3, 1, 1, 1, 1);
  const Tensor image = nn::test::randomTensor({1, 16, 16, 16}, 14);
  const nn::test::RouteWatch winograd(Route::convolutionWinograd), unfolded(Route::convolutionUnfolded);
  {
    Autocast scope(DType::BFloat16);
    convolution.forward(image);
    convolution.backward(image, image);
  }
  nn::cpu::allowAmx(previous);
  CHECK(winograd.ran(Pass::forward) == 1);
  CHECK(winograd.ran(Pass::gradInput) == 1);
  CHECK(winograd.ran(Pass::gradParameters) == 1);
  CHECK(unfolded.ran(Pass::forward) == 0);
}

TEST_CASE("A bfloat16 scope's 3x3 convolution gives the same output and gradInput on 1 and 2 threads", "[autocast]") {
  REQUIRE_BF16_PRODUCTS();
  nn::manualSeed(5);
  Autocast scope(DType::BFloat16);
  auto check = [](nn::SpatialConvolution& convolution, const Tensor& x, const Tensor& gy) {
    const Passes one = runPasses(convolution, x, gy);
    nn::setNumThreads(2);
    const Passes two = runPasses(convolution, x, gy);
    nn::setNumThreads(1);
    CHECK(one.output == two.output);
    CHECK(one.gradInput == two.gradInput);
  };
  nn::SpatialConvolution convolution(32, 32, 3, 3, 1, 1, 1, 1);
  check(convolution, nn::test::randomTensor({3, 32, 32, 32}, 31), nn::test::randomTensor({3, 32, 32, 32}, 32));
  // 7x7 planes, their 13 samples in two chunks of the planes (12 and 1), one on each thread.
  nn::SpatialConvolution small(64, 64, 3, 3, 1, 1, 1, 1);
  check(small, nn::test::randomTensor({13, 64, 7, 7}, 33), nn::test::randomTensor({13, 64, 7, 7}, 34));
  // Stride 2 from the input's phases, 20 samples in two chunks (16 and 4).
  nn::SpatialConvolution strided(32, 64, 3, 3, 2, 2, 1, 1);
  check(strided, nn::test::randomTensor({20, 32, 14, 14}, 35), nn::test::randomTensor({20, 64, 7, 7}, 36));
}

TEST_CASE("Convolutions' passes in a float16 scope: float16 operands within their bound of float32's", "[autocast]") {
  checkConvolution(DType::Float16, 3, 6, 16, 5, 12, 1);
  checkConvolution(DType::Float16, 2, 4, 6, 3, 9, 2);
}

TEST_CASE("Below AVX512-BF16 a bfloat16 scope multiplies in float32", "[autocast]") {
  // Lowered to avx2, this machine is one.
  const nn::cpu::Isa previous = nn::cpu::setIsa(nn::cpu::Isa::avx2);
  nn::manualSeed(7);
  nn::Linear linear(77, 40);
  const Tensor x = nn::test::randomTensor({5, 77}, 11), gy = nn::test::randomTensor({5, 40}, 12);
  const Passes plain = runPasses(linear, x, gy);
  Passes scoped;
  {
    Autocast scope(DType::BFloat16);
    scoped = runPasses(linear, x, gy);
  }
  // A 3x3 layer keeps float32's routes: Winograd's forward and gradInput.
  nn::SpatialConvolution convolution(16, 16, 3, 3, 1, 1, 1, 1);
  const Tensor image = nn::test::randomTensor({1, 16, 16, 16}, 13);
  const nn::test::RouteWatch winograd(Route::convolutionWinograd);
  {
    Autocast scope(DType::BFloat16);
    convolution.forward(image);
    convolution.backward(image, image);
  }
  nn::cpu::setIsa(previous);
  CHECK(scoped.output == plain.output);
  CHECK(scoped.gradInput == plain.gradInput);
  CHECK(scoped.gradWeight == plain.gradWeight);
  CHECK(winograd.ran(Pass::forward) == 1);
  CHECK(winograd.ran(Pass::gradInput) == 1);
  CHECK(winograd.ran(Pass::gradParameters) == 1);
}

TEST_CASE("In a scope, softmax, log-softmax, batch normalisation and the criterions stay float32", "[autocast]") {
  const Tensor x = nn::test::randomTensor({16, 10}, 5);
  const Tensor target = Tensor::fromVector({16}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5});
  auto run = [&] {
    nn::manualSeed(4);  // batch normalisation's weights
    nn::SoftMax softMax;
    nn::LogSoftMax logSoftMax;
    nn::BatchNormalization batchNorm(10);
    nn::ClassNLLCriterion nll;
    std::vector<float> all = softMax.forward(x).toVector();
    const std::vector<float> l = logSoftMax.forward(x).toVector(), b = batchNorm.forward(x).toVector();
    all.insert(all.end(), l.begin(), l.end());
    all.insert(all.end(), b.begin(), b.end());
    const std::vector<float> g = batchNorm.backward(x, x).toVector();
    all.insert(all.end(), g.begin(), g.end());
    all.push_back(static_cast<float>(nll.forward(logSoftMax.output, target)));
    return all;
  };
  const std::vector<float> plain = run();
  for (DType type : {DType::BFloat16, DType::Float16}) {
    Autocast scope(type);
    const std::vector<float> scoped = run();
    REQUIRE(scoped.size() == plain.size());
    size_t differ = 0;
    for (size_t i = 0; i < plain.size(); ++i)
      if (!(scoped[i] == plain[i])) {
        UNSCOPED_INFO("element " << i << ": " << scoped[i] << " against " << plain[i]);
        ++differ;
      }
    CHECK(differ == 0);
  }
}

TEST_CASE("A device's compute threads take the caller's scope", "[autocast]") {
  nn::setNumThreads(2);
  // Batch 64 over 70 outputs: the forward product cut into two parts, one on a worker thread.
  checkLinear(DType::Float16, 64, 301, 70);
  nn::setNumThreads(1);
}

namespace {

// A Linear in a DataParallelTable on cpu:0 and cpu:1 inside a scope of `type`: the replicas'
// products are the scope's (each output, input gradient and the summed weight gradient within
// float32's rounding of the sums of rounded operands, away from the exact ones).
void checkReplicas(DType type) {
  const int64_t batch = 8, in = 96, out = 40;
  nn::manualSeed(3);
  auto linear = std::make_shared<nn::Linear>(in, out);
  const std::vector<float> w = linear->weight.toVector(), b = linear->bias.toVector();
  auto table = std::make_shared<nn::DataParallelTable>(0, true, false);
  table->add(linear, {nn::Device::cpu(0), nn::Device::cpu(1)});
  const Tensor x = nn::test::randomTensor({batch, in}, 41), gy = nn::test::randomTensor({batch, out}, 42);
  table->zeroGradParameters();
  std::vector<float> y, gx, gw;
  {
    Autocast scope(type);
    y = table->forward(x).toVector();
    gx = table->backward(x, gy).toVector();
  }
  gw = linear->gradWeight.toVector();
  // The float32 results, for the bound between the two.
  nn::Linear plainLinear(in, out);
  plainLinear.weight.copy_(Tensor::fromVector({out, in}, w));
  plainLinear.bias.copy_(Tensor::fromVector({out}, b));
  const Passes plain = runPasses(plainLinear, x, gy);
  const std::vector<float> xv = x.toVector(), gv = gy.toVector();
  Sums ys(y.size(), type), gxs(gx.size(), type), gws(gw.size(), type);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < out; ++o) {
      for (int64_t k = 0; k < in; ++k) {
        ys.add(n * out + o, xv[n * in + k], w[o * in + k]);
        gxs.add(n * in + k, gv[n * out + o], w[o * in + k]);
        gws.add(o * in + k, gv[n * out + o], xv[n * in + k]);
      }
      ys.exact[n * out + o] += b[o];
      ys.narrow[n * out + o] += b[o];
      ys.magnitude[n * out + o] += std::fabs(b[o]);
    }
  checkPass("forward", y, plain.output, ys, in + 1);
  checkPass("gradInput", gx, plain.gradInput, gxs, out);
  // Each replica sums its half of the batch, then the halves are added.
  checkPass("gradWeight", gw, plain.gradWeight, gws, batch + 2);
}

}  // namespace

TEST_CASE("A DataParallelTable's replicas take the scope of the thread that calls forward and backward",
          "[autocast][DataParallelTable]") {
  checkReplicas(DType::Float16);
}

TEST_CASE("A DataParallelTable's replicas multiply in bfloat16 in a bfloat16 scope", "[autocast][DataParallelTable]") {
  REQUIRE_BF16_PRODUCTS();
  checkReplicas(DType::BFloat16);
}
