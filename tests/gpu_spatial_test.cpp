// [gpu] tests of the spatial modules on CUDA (SpatialConvolution through cuDNN, max and average
// pooling through the project's kernels), each compared with the CPU module on odd sizes: odd
// batch and planes, stride 2, padding, ceil mode, a non-contiguous input. Where the machine has
// no CUDA device, tests/main.cpp leaves them out and counts them as skipped.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "cunn/cuda/CudaAllocator.h"
#include "cunn/cuda/CudaBackend.h"
#include "nn/Random.h"
#include "nn/SpatialAveragePooling.h"
#include "nn/SpatialConvolution.h"
#include "nn/SpatialMaxPooling.h"
#include "tests/GradCheck.h"

using nn::Device;
using nn::Tensor;

namespace {

// Elements whose bits differ (so -0 differs from 0, and NaN equals the same NaN); the sizes
// must match.
int64_t differingBits(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.toVector(), y = b.toVector();
  if (x.size() != y.size()) return -1;
  int64_t differing = 0;
  for (size_t i = 0; i < x.size(); ++i) differing += std::memcmp(&x[i], &y[i], sizeof(float)) != 0;
  return differing;
}

// Values on a grid of 0.25 in [-2, 2), so that many windows hold equal maxima, and a NaN,
// which must win its windows on both devices.
Tensor poolingInput(const std::vector<int64_t>& sizes, uint64_t seed) {
  Tensor x = nn::test::randomTensor(sizes, seed, -2.f, 2.f);
  float* v = x.data();
  for (int64_t i = 0; i < x.numel(); ++i) v[i] = std::floor(v[i] * 4.f) / 4.f;
  v[x.numel() / 3] = std::numeric_limits<float>::quiet_NaN();
  return x;
}

// Random gradients with some -0 among them: where windows are disjoint, max pooling writes a
// winner's gradient as it is, elsewhere it adds it to 0, which makes -0 into 0.
Tensor gradientWithNegativeZeros(const std::vector<int64_t>& sizes, uint64_t seed) {
  Tensor g = nn::test::randomTensor(sizes, seed);
  for (int64_t i = 0; i < g.numel(); i += 7) g.data()[i] = -0.f;
  return g;
}

struct PoolingCase {
  const char* name;
  std::vector<int64_t> sizes;  // the input's
  int64_t k, d, pad;
  bool ceil;
};

// Odd batch and planes throughout. 13 x 11 under 3x3 windows, stride 2, padding 1, in both
// modes (ceil mode adds a last window hanging over the edge); 9 x 8 under 2x2, stride 2: windows
// that tile the input (the CPU's faster path) with a row below them that no window covers; a
// 3-D input; 7 x 10 under 3x3, stride 2, no padding, in ceil mode.
const std::vector<PoolingCase> kPoolingCases = {
    {"3x3 stride 2 pad 1", {3, 5, 13, 11}, 3, 2, 1, false}, {"3x3 stride 2 pad 1 ceil", {3, 5, 13, 11}, 3, 2, 1, true},
    {"2x2 stride 2, tiling", {3, 5, 9, 8}, 2, 2, 0, false}, {"3-D input", {5, 9, 8}, 3, 2, 1, true},
    {"3x3 stride 2 ceil", {1, 3, 7, 10}, 3, 2, 0, true},
};

// Runs `cpu` and `gpu` (copies of one module) forward and backward on x and g and requires equal
// bits of output and gradInput.
void requireSameBits(nn::Module& cpu, nn::Module& gpu, const Tensor& x, const Tensor& g, const Device& device) {
  const Tensor xGpu = x.to(device), gGpu = g.to(device);
  const Tensor& yGpu = gpu.forward(xGpu);
  REQUIRE(yGpu.device() == device);
  REQUIRE(differingBits(yGpu, cpu.forward(x)) == 0);
  if (auto* cpuMax = dynamic_cast<nn::SpatialMaxPooling*>(&cpu))
    REQUIRE(differingBits(dynamic_cast<nn::SpatialMaxPooling&>(gpu).indices, cpuMax->indices) == 0);
  REQUIRE(differingBits(gpu.backward(xGpu, gGpu), cpu.backward(x, g)) == 0);
}

// The worst rounding error of a float sum of `terms` terms (products rounded once more) whose
// magnitudes add up to at most `magnitude`, in any order: gamma(terms + 1) * magnitude with
// gamma(n) = n u / (1 - n u), u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms,
// 3.1). Two devices summing in different orders differ by at most twice that.
double twoOrdersBound(int64_t terms, double magnitude) {
  const double u = std::ldexp(1.0, -24), nu = static_cast<double>(terms + 1) * u;
  return 2 * nu / (1 - nu) * magnitude;
}

}  // namespace

TEST_CASE("SpatialMaxPooling and SpatialAveragePooling on CUDA give the CPU's bits", "[gpu]") {
  const Device gpu = Device::cuda(0);
  for (const PoolingCase& c : kPoolingCases) {
    CAPTURE(c.name);
    const Tensor x = poolingInput(c.sizes, 11);
    nn::SpatialMaxPooling maxCpu(c.k, c.k, c.d, c.d, c.pad, c.pad);
    if (c.ceil) maxCpu.ceil();
    const Tensor g = gradientWithNegativeZeros(maxCpu.forward(x).sizes(), 12);
    auto maxGpu = maxCpu.clone();
    maxGpu->to(gpu);
    requireSameBits(maxCpu, *maxGpu, x, g, gpu);
    for (const bool includePad : {true, false}) {
      CAPTURE(includePad);
      nn::SpatialAveragePooling avgCpu(c.k, c.k, c.d, c.d, c.pad, c.pad);
      if (c.ceil) avgCpu.ceil();
      if (!includePad) avgCpu.setCountExcludePad();
      auto avgGpu = avgCpu.clone();
      avgGpu->to(gpu);
      requireSameBits(avgCpu, *avgGpu, nn::test::randomTensor(c.sizes, 13), g, gpu);
    }
  }
}

TEST_CASE("Pooling on CUDA takes a non-contiguous input as the CPU does", "[gpu]") {
  const Device gpu = Device::cuda(0);
  const Tensor stored = poolingInput({3, 5, 11, 13}, 21);
  const Tensor x = stored.transpose(2, 3);  // [3, 5, 13, 11]
  REQUIRE_FALSE(x.isContiguous());
  nn::SpatialMaxPooling maxCpu(3, 3, 2, 2, 1, 1);
  nn::SpatialAveragePooling avgCpu(3, 3, 2, 2, 1, 1);
  maxCpu.ceil();
  avgCpu.ceil();
  const Tensor g = gradientWithNegativeZeros(maxCpu.forward(x).sizes(), 22);
  for (nn::Module* cpu : {static_cast<nn::Module*>(&maxCpu), static_cast<nn::Module*>(&avgCpu)}) {
    CAPTURE(cpu->toString());
    auto onGpu = cpu->clone();
    onGpu->to(gpu);
    // The strided host view goes to the device as a contiguous copy.
    requireSameBits(*cpu, *onGpu, x, g, gpu);
    // A strided view of CUDA memory is made contiguous on the device (the backend's strided
    // copy), with the same bits.
    const std::vector<float> fromStridedGpu = onGpu->forward(stored.to(gpu).transpose(2, 3)).toVector();
    REQUIRE(fromStridedGpu == cpu->forward(x).toVector());
  }
}

TEST_CASE("SpatialConvolution on CUDA gives the CPU's output and gradients within the rounding of a sum", "[gpu]") {
  const Device gpu = Device::cuda(0);
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
    nn::SpatialConvolution cpu(3, 5, c.kW, c.kH, c.d, c.d, c.pad, c.pad);
    auto onGpu = std::dynamic_pointer_cast<nn::SpatialConvolution>(cpu.clone());
    onGpu->to(gpu);
    // The non-contiguous input is a transposed view of a tensor stored [3, 3, 11, 9].
    const Tensor stored = c.strided ? nn::test::randomTensor({c.sizes[0], c.sizes[1], c.sizes[3], c.sizes[2]}, 31)
                                    : nn::test::randomTensor(c.sizes, 31);
    const Tensor x = c.strided ? stored.transpose(2, 3) : stored;
    REQUIRE(x.isContiguous() != c.strided);
    const Tensor xGpu = x.to(gpu);
    const Tensor y = cpu.forward(x).clone();
    const Tensor g = nn::test::randomTensor(y.sizes(), 32);
    const Tensor gGpu = g.to(gpu);
    const Tensor yGpu = onGpu->forward(xGpu).clone();
    // Two backward passes of scale 0.5 from zero: accGradParameters adds to the gradients.
    cpu.zeroGradParameters();
    onGpu->zeroGradParameters();
    for (int pass = 0; pass < 2; ++pass) {
      cpu.backward(x, g, 0.5f);
      onGpu->backward(xGpu, gGpu, 0.5f);
    }

    // Every value is a sum of products, which the CPU (im2col and OpenBLAS) and cuDNN add in
    // different orders. Inputs and gradOutput lie in [-1, 1), weight and bias within
    // w = 1 / sqrt(n), n = 3 kH kW (the module's reset), outputs are summed over the positions
    // p = batch outH outW:
    //   output:     at most n products below w, plus the bias below w;
    //   gradInput:  at most 5 kH kW products below w (5 output planes, every tap);
    //   gradWeight: p products below 1, twice times 0.5;
    //   gradBias:   p terms below 1, twice times 0.5.
    const int64_t n = 3 * c.kH * c.kW, p = y.numel() / 5;
    const double w = 1 / std::sqrt(static_cast<double>(n));
    REQUIRE(nn::test::maxAbsDiff(yGpu, y) <= twoOrdersBound(n + 1, (n + 1) * w));
    REQUIRE(nn::test::maxAbsDiff(onGpu->gradInput, cpu.gradInput) <=
            twoOrdersBound(5 * c.kH * c.kW, 5 * c.kH * c.kW * w));
    // Two passes: each side's error is at most the bound of one sum of 2p terms (+ 2 for the
    // scaling and the adding to what is there).
    REQUIRE(nn::test::maxAbsDiff(onGpu->gradWeight, cpu.gradWeight) <= twoOrdersBound(2 * p + 2, p));
    REQUIRE(nn::test::maxAbsDiff(onGpu->gradBias, cpu.gradBias) <= twoOrdersBound(2 * p + 2, p));
    // A strided view of CUDA memory is made contiguous on the device (the backend's strided
    // copy): the same output as from the contiguous copy made on the host.
    if (c.strided) REQUIRE(onGpu->forward(stored.to(gpu).transpose(2, 3)).toVector() == yGpu.toVector());
  }
}

TEST_CASE("steady convolution and pooling steps on CUDA make no cudaMalloc", "[gpu]") {
  const Device gpu = Device::cuda(0);
  nn::CudaAllocator& allocator = nn::CudaBackend::instance().allocator(0);
  nn::manualSeed(3);
  nn::SpatialConvolution conv(3, 4, 3, 3, 1, 1, 1, 1);
  nn::SpatialMaxPooling maxPool(2, 2);
  nn::SpatialAveragePooling avgPool(3, 3, 2, 2, 1, 1);
  conv.to(gpu);
  const Tensor x = nn::test::randomTensor({5, 3, 12, 12}, 41).to(gpu);
  const Tensor g = nn::test::randomTensor({5, 4, 6, 6}, 42).to(gpu);
  const auto step = [&] {
    const Tensor& y = conv.forward(x);
    const Tensor& pooled = maxPool.forward(y);
    avgPool.forward(y);
    conv.backward(x, maxPool.backward(y, g));
    avgPool.backward(y, avgPool.output);
    return pooled.toVector();
  };
  const std::vector<float> first = step();
  const int64_t mallocs = allocator.mallocCount();
  for (int i = 0; i < 5; ++i) {
    conv.zeroGradParameters();
    REQUIRE(step() == first);  // deterministic algorithms: the same forward every time
  }
  REQUIRE(allocator.mallocCount() == mallocs);
}
