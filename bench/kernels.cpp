// Microbenchmarks (Google Benchmark) of the kernels of the benchmark suite's networks at batch
// 128, on 1 and 2 compute threads: SpatialConvolution (LeNet's 5x5 and the 3x3 padded ones of
// the VGG-style network) and Linear forward, updateGradInput and accGradParameters in GFLOP/s
// (one multiply-add counts as 2) and as a share of the machine's sgemm rate on as many threads;
// SpatialBatchNormalization (training mode), ReLU, Dropout and SpatialMaxPooling forward and
// backward in GB/s (the bytes each must read and write once) and as a share of the machine's
// copy bandwidth. Both yardsticks are measured first, and printed. And the GEMMs of LeNet, the
// MLP, the VGG-style CNN and a square 1024 case on 1 and 2 threads, OpenBLAS's sgemm beside the
// bfloat16 kernels of the precision medium, vdpbf16ps (AVX512-BF16, nn/cpu/Bf16Gemm.h) and AMX's
// tiles (nn/cpu/AmxGemm.h), with the ratios of their rates.
// Run: tools/bench-kernels.sh.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "nn/cpu/AmxGemm.h"
#include "nn/cpu/Bf16Gemm.h"
#include "nn/cpu/Blas.h"
#include "nn/modules/Dropout.h"
#include "nn/modules/Linear.h"
#include "nn/modules/ReLU.h"
#include "nn/modules/SpatialBatchNormalization.h"
#include "nn/modules/SpatialConvolution.h"
#include "nn/modules/SpatialMaxPooling.h"
#include "nn/runtime/ComputeThreads.h"
#include "nn/tensor/Random.h"

namespace {

constexpr int64_t kBatch = 128;

// The yardsticks on 1 and 2 threads: the sgemm rate (GFLOP/s, 1024^3 through nn::blas::gemm)
// and the copy bandwidth (GB/s read plus written: 16 MB, the size of the activations below,
// copied by a vectorised loop in one part per compute thread of cpu:0, from the caches where
// they hold it; memcpy would bypass them with streaming stores).
double gSgemm[3] = {0, 0, 0};
double gCopy[3] = {0, 0, 0};

double seconds() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void measureYardsticks() {
  const int64_t n = 1024;
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  for (int threads = 1; threads <= 2; ++threads) {
    nn::blas::setNumThreads(threads);
    double best = 0;
    for (int r = 0; r < 6; ++r) {
      const double start = seconds();
      nn::blas::gemm(false, false, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
      best = std::max(best, 2e-9 * n * n * n / (seconds() - start));
    }
    gSgemm[threads] = best;
  }
  nn::blas::setNumThreads(1);
  const int64_t bytes = int64_t{16} << 20;
  std::vector<float> from(bytes / sizeof(float), 1.f), to(bytes / sizeof(float), 0.f);
  for (int threads = 1; threads <= 2; ++threads) {
    nn::setNumThreads(threads);
    for (int r = 0; r < 50; ++r) {
      const double start = seconds();
      nn::parallelRanges(nn::Device::cpu(0), static_cast<int64_t>(from.size()), 1, [&](int64_t begin, int64_t end) {
        // "+ 0.f", which the compiler may not drop (-0 + 0 is +0), keeps it from calling memcpy.
        const float* __restrict src = from.data();
        float* __restrict dst = to.data();
        for (int64_t i = begin; i < end; ++i) dst[i] = src[i] + 0.f;
      });
      benchmark::DoNotOptimize(to.data());
      gCopy[threads] = std::max(gCopy[threads], 2e-9 * static_cast<double>(bytes) / (seconds() - start));
    }
  }
  nn::setNumThreads(1);
  std::printf("yardsticks: sgemm %.1f GFLOP/s on 1 thread, %.1f on 2; copy %.1f GB/s on 1 thread, %.1f on 2\n",
              gSgemm[1], gSgemm[2], gCopy[1], gCopy[2]);
}

// Backward: updateGradInput, then accGradParameters (Module::backward).
enum class Pass { Forward, GradInput, GradParameters, Backward };

nn::Tensor randomInput(const std::vector<int64_t>& sizes) {
  nn::Tensor t = nn::Tensor::empty(sizes);
  t.uniform_(nn::defaultGenerator(), -1.f, 1.f);
  return t;
}

// Runs `pass` of `module` on `input` in the timed loop, after one forward (and, for the
// backward passes, one gradOutput) outside it. `work` is the flops or bytes of one call,
// reported per second (of wall time: OpenBLAS may run several threads) under `unit`.
void run(benchmark::State& state, nn::Module& module, const nn::Tensor& input, Pass pass, double work,
         const char* unit) {
  const int threads = static_cast<int>(state.range(0));
  nn::setNumThreads(threads);
  const nn::Tensor& output = module.forward(input);
  const nn::Tensor gradOutput = randomInput(output.sizes());
  const double start = seconds();
  for (auto _ : state) {
    switch (pass) {
      case Pass::Forward:
        benchmark::DoNotOptimize(module.updateOutput(input).data());
        break;
      case Pass::GradInput:
        benchmark::DoNotOptimize(module.updateGradInput(input, gradOutput).data());
        break;
      case Pass::GradParameters:
        module.accGradParameters(input, gradOutput, 1.f);
        break;
      case Pass::Backward:
        benchmark::DoNotOptimize(module.backward(input, gradOutput).data());
        break;
    }
    benchmark::ClobberMemory();
  }
  const double elapsed = seconds() - start;
  state.counters[unit] = benchmark::Counter(1e-9 * work, benchmark::Counter::kIsIterationInvariantRate);
  // The share of the yardstick on as many threads: the sgemm rate, or the copy bandwidth.
  const double rate = 1e-9 * work * static_cast<double>(state.iterations()) / elapsed;
  const double peak = std::strcmp(unit, "GFLOP") == 0 ? gSgemm[threads] : gCopy[threads];
  state.counters["peak%"] = 100 * rate / peak;
  nn::setNumThreads(1);
}

// LeNet's convolutions: 1 -> 20 on 28x28 and 20 -> 50 on 12x12, 5x5 kernels. Every pass does
// the same multiply-adds: batch x outPlanes x outH x outW x inPlanes x 5 x 5.
void convolution(benchmark::State& state, int64_t in, int64_t out, int64_t size, Pass pass) {
  nn::SpatialConvolution conv(in, out, 5, 5);
  const int64_t outSize = size - 4;
  const double flops = 2.0 * kBatch * out * outSize * outSize * in * 25;
  run(state, conv, randomInput({kBatch, in, size, size}), pass, flops, "GFLOP");
}

// Fully connected layers (LeNet's, the MLP's): batch x in x out multiply-adds.
void linear(benchmark::State& state, int64_t in, int64_t out, Pass pass) {
  nn::Linear layer(in, out);
  run(state, layer, randomInput({kBatch, in}), pass, 2.0 * kBatch * in * out, "GFLOP");
}

// LeNet's 2x2 max-pooling of 20 planes of 24x24 and 50 of 8x8. Forward reads the input and
// writes the output and its indices; backward reads gradOutput and the indices and writes
// gradInput.
void maxPooling(benchmark::State& state, int64_t planes, int64_t size, Pass pass) {
  nn::SpatialMaxPooling pool(2, 2, 2, 2);
  const double in = static_cast<double>(kBatch * planes * size * size), out = in / 4;
  const double bytes = sizeof(float) * (pass == Pass::Forward ? in + 2 * out : 2 * out + in);
  run(state, pool, randomInput({kBatch, planes, size, size}), pass, bytes, "GB");
}

// The padded 3x3 convolutions of stride 1 of the VGG-style network (32x32 and 16x16 planes, the
// CPU's Winograd route) and of the residual network (14x14 and 7x7, unfolded): `in` -> `out`
// planes on size x size. GFLOP/s count the multiply-adds of the sums of the taps.
void convolution3x3(benchmark::State& state, int64_t in, int64_t out, int64_t size, Pass pass) {
  nn::SpatialConvolution conv(in, out, 3, 3, 1, 1, 1, 1);
  const double flops = 2.0 * kBatch * out * size * size * in * 9;
  run(state, conv, randomInput({kBatch, in, size, size}), pass, flops, "GFLOP");
}

// The residual network's 3x3 convolutions of stride 2 and padding 1: `in` -> `out` planes,
// size x size -> size/2 x size/2.
void convolution3x3Strided(benchmark::State& state, int64_t in, int64_t out, int64_t size, Pass pass) {
  nn::SpatialConvolution conv(in, out, 3, 3, 2, 2, 1, 1);
  const double flops = 2.0 * kBatch * out * (size / 2) * (size / 2) * in * 9;
  run(state, conv, randomInput({kBatch, in, size, size}), pass, flops, "GFLOP");
}

// The residual network's 1x1 shortcuts of stride 2: `in` -> `out` planes, size x size -> size/2 x
// size/2. Few multiply-adds per element moved: GB/s count the input (forward reads it and writes
// the output; gradInput reads gradOutput and writes the input's size; the weight gradient reads
// both).
void shortcut(benchmark::State& state, int64_t in, int64_t out, int64_t size, Pass pass) {
  nn::SpatialConvolution conv(in, out, 1, 1, 2, 2);
  const double elements = static_cast<double>(kBatch * size * size);
  const double bytes = sizeof(float) * elements * (in + static_cast<double>(out) / 4);
  run(state, conv, randomInput({kBatch, in, size, size}), pass, bytes, "GB");
}

// Training-mode batch normalisation of `planes` planes of size x size: forward reads the input
// and writes the output; backward (updateGradInput, then accGradParameters, as backward calls
// them) reads the input and gradOutput and writes gradInput.
void batchNorm(benchmark::State& state, int64_t planes, int64_t size, Pass pass) {
  nn::SpatialBatchNormalization bn(planes);
  const double elements = static_cast<double>(kBatch * planes * size * size);
  const double bytes = sizeof(float) * elements * (pass == Pass::Forward ? 2 : 3);
  run(state, bn, randomInput({kBatch, planes, size, size}), pass, bytes, "GB");
}

// ReLU (not in place: the input stays for the next iteration) and Dropout(0.5) in training
// mode over a VGG-sized activation [128, 32, 32, 32]: forward reads the input and writes the
// output (Dropout also its mask), backward reads gradOutput and the input (ReLU) or the mask
// (Dropout) and writes gradInput.
void relu(benchmark::State& state, Pass pass) {
  nn::ReLU module;
  const double bytes = sizeof(float) * static_cast<double>(kBatch * 32 * 32 * 32) * (pass == Pass::Forward ? 2 : 3);
  run(state, module, randomInput({kBatch, 32, 32, 32}), pass, bytes, "GB");
}

void dropout(benchmark::State& state, Pass pass) {
  nn::Dropout module(0.5f);
  const double bytes = sizeof(float) * static_cast<double>(kBatch * 32 * 32 * 32) * 3;
  run(state, module, randomInput({kBatch, 32, 32, 32}), pass, bytes, "GB");
}

// One GEMM's shape as a layer's pass hands it to nn::blas::gemm: C[m, n] = op(A) op(B), op(A)
// m x k.
struct GemmShape {
  bool transA, transB;
  int64_t m, n, k;
};

// The products compared on each shape: OpenBLAS's sgemm, and the two bfloat16 kernels of the
// precision medium, vdpbf16ps (AVX512-BF16) and AMX's tiles (nn/cpu/Bf16Gemm.h, AmxGemm.h).
enum class Kernel { sgemm, vdpbf16ps, amx };

// Each kernel's rate on each shape and thread count, by "shape/threads": a later kernel's benchmark
// of that shape divides its own rate by the earlier ones'.
std::map<std::string, double> gGemmRate[3];

// C = op(A) op(B) through `kernel` on `threads` compute threads of cpu:0 (the argument), in
// GFLOP/s: on 2, cut into 2 parts as the Linear kernels cut a product (by C's columns where there
// are at least as many as rows, else by rows), each part one call on its thread (OpenBLAS on one
// thread inside it). The bfloat16 kernels' "x_sgemm" is their rate over sgemm's on the same shape
// and threads, AMX's "x_vdpbf16ps" over vdpbf16ps's. Operands from [-1, 1], stored without
// padding.
void gemm(benchmark::State& state, const char* shape, GemmShape g, Kernel kernel) {
  if (kernel == Kernel::vdpbf16ps && !nn::cpu::bf16GemmRuns()) {
    state.SkipWithError(nn::cpu::bf16GemmMissing().c_str());
    return;
  }
  if (kernel == Kernel::amx && !nn::cpu::amxGemmRuns()) {
    state.SkipWithError(nn::cpu::amxGemmMissing().c_str());
    return;
  }
  const int threads = static_cast<int>(state.range(0));
  nn::blas::setNumThreads(1);
  nn::setNumThreads(threads);
  const nn::Tensor a = randomInput({g.transA ? g.k : g.m, g.transA ? g.m : g.k});
  const nn::Tensor b = randomInput({g.transB ? g.n : g.k, g.transB ? g.k : g.n});
  nn::Tensor c = nn::Tensor::zeros({g.m, g.n});
  const int64_t lda = g.transA ? g.m : g.k, ldb = g.transB ? g.k : g.n;
  auto multiply = kernel == Kernel::sgemm       ? &nn::blas::gemm
                  : kernel == Kernel::vdpbf16ps ? &nn::cpu::avx512Bf16Gemm
                                                : &nn::cpu::amxGemm;
  const bool byColumns = g.n >= g.m;
  const float* pa = a.data();
  const float* pb = b.data();
  float* pc = c.data();
  const double start = seconds();
  for (auto _ : state) {
    nn::parallelFor(nn::Device::cpu(0), threads, [&](int p) {
      const nn::Range r = nn::partRange(byColumns ? g.n : g.m, threads, p);
      const int64_t i0 = byColumns ? 0 : r.begin, rows = byColumns ? g.m : r.end - r.begin;
      const int64_t j0 = byColumns ? r.begin : 0, cols = byColumns ? r.end - r.begin : g.n;
      multiply(g.transA, g.transB, rows, cols, g.k, 1.f, pa + (g.transA ? i0 : i0 * lda), lda,
               pb + (g.transB ? j0 * ldb : j0), ldb, 0.f, pc + i0 * g.n + j0, g.n);
    });
    benchmark::ClobberMemory();
  }
  const double rate = 2e-9 * g.m * g.n * g.k * static_cast<double>(state.iterations()) / (seconds() - start);
  nn::setNumThreads(1);
  state.counters["GFLOP"] = benchmark::Counter(2e-9 * g.m * g.n * g.k, benchmark::Counter::kIsIterationInvariantRate);
  const std::string key = std::string(shape) + "/" + std::to_string(threads);
  gGemmRate[static_cast<int>(kernel)][key] = rate;
  if (kernel != Kernel::sgemm && gGemmRate[0].count(key)) state.counters["x_sgemm"] = rate / gGemmRate[0][key];
  if (kernel == Kernel::amx && gGemmRate[1].count(key)) state.counters["x_vdpbf16ps"] = rate / gGemmRate[1][key];
}

}  // namespace

// The GEMMs of LeNet's second convolution (unfolded: 500 rows = 20 planes x 5 x 5, 64
// positions, per sample) and first Linear (800 -> 500) at batch 128, of the MLP
// (784-1024-1024-10) at batch 256, of the VGG-style CNN at batch 128 (the Winograd route's 16
// products per sample of its 3x3 convolutions, 32 -> 32 planes on 32x32 (256 blocks of 2x2) and
// 64 -> 64 on 16x16 (64 blocks), one sample a chunk; its first Linear, 4096 -> 256), and a square
// 1024 case: each pass's product as the CPU's kernels call it (nn/cpu/ConvolutionKernels.cpp,
// WinogradConvolution.cpp, LinearKernels.cpp). LeNet's first convolution and the 10-output
// layers take routes of our own and no GEMM. Argument: compute threads.
#define NN_GEMM_BENCHMARK(name, ...)                                                          \
  BENCHMARK_CAPTURE(gemm, name##_sgemm, #name, GemmShape{__VA_ARGS__}, Kernel::sgemm)         \
      ->Arg(1)                                                                                \
      ->Arg(2)                                                                                \
      ->UseRealTime()                                                                         \
      ->MinTime(0.2);                                                                         \
  BENCHMARK_CAPTURE(gemm, name##_vdpbf16ps, #name, GemmShape{__VA_ARGS__}, Kernel::vdpbf16ps) \
      ->Arg(1)                                                                                \
      ->Arg(2)                                                                                \
      ->UseRealTime()                                                                         \
      ->MinTime(0.2);                                                                         \
  BENCHMARK_CAPTURE(gemm, name##_amx, #name, GemmShape{__VA_ARGS__}, Kernel::amx)             \
      ->Arg(1)                                                                                \
      ->Arg(2)                                                                                \
      ->UseRealTime()                                                                         \
      ->MinTime(0.2)
NN_GEMM_BENCHMARK(lenet_conv2_forward, false, false, 50, 64, 500);
NN_GEMM_BENCHMARK(lenet_conv2_gradInput, true, false, 500, 64, 50);
NN_GEMM_BENCHMARK(lenet_conv2_gradWeight, false, true, 500, 50, 64);
NN_GEMM_BENCHMARK(lenet_fc1_forward, false, true, 128, 500, 800);
NN_GEMM_BENCHMARK(lenet_fc1_gradInput, false, false, 128, 800, 500);
NN_GEMM_BENCHMARK(lenet_fc1_gradWeight, true, false, 500, 800, 128);
NN_GEMM_BENCHMARK(mlp1_forward, false, true, 256, 1024, 784);
NN_GEMM_BENCHMARK(mlp1_gradWeight, true, false, 1024, 784, 256);
NN_GEMM_BENCHMARK(mlp2_forward, false, true, 256, 1024, 1024);
NN_GEMM_BENCHMARK(mlp2_gradInput, false, false, 256, 1024, 1024);
NN_GEMM_BENCHMARK(mlp2_gradWeight, true, false, 1024, 1024, 256);
NN_GEMM_BENCHMARK(vgg_conv32_forward, false, false, 32, 256, 32);
NN_GEMM_BENCHMARK(vgg_conv32_gradWeight, false, true, 32, 32, 256);
NN_GEMM_BENCHMARK(vgg_conv64_forward, false, false, 64, 64, 64);
NN_GEMM_BENCHMARK(vgg_conv64_gradWeight, false, true, 64, 64, 64);
NN_GEMM_BENCHMARK(vgg_fc1_forward, false, true, 128, 256, 4096);
NN_GEMM_BENCHMARK(vgg_fc1_gradInput, false, false, 128, 4096, 256);
NN_GEMM_BENCHMARK(vgg_fc1_gradWeight, true, false, 256, 4096, 128);
NN_GEMM_BENCHMARK(square_1024, false, false, 1024, 1024, 1024);

// Argument: compute threads (OpenBLAS runs one inside each part).
BENCHMARK_CAPTURE(convolution, conv1_forward, 1, 20, 28, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution, conv1_gradInput, 1, 20, 28, Pass::GradInput)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution, conv1_gradParameters, 1, 20, 28, Pass::GradParameters)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution, conv2_forward, 20, 50, 12, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution, conv2_gradInput, 20, 50, 12, Pass::GradInput)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution, conv2_gradParameters, 20, 50, 12, Pass::GradParameters)->Arg(1)->Arg(2)->UseRealTime();
// First layers, of 3 (RGB) and 1 input planes.
BENCHMARK_CAPTURE(convolution3x3, vgg_first_forward, 3, 32, 32, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3, vgg_first_gradParameters, 3, 32, 32, Pass::GradParameters)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3, resnet_first_forward, 1, 16, 28, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3, resnet_first_gradParameters, 1, 16, 28, Pass::GradParameters)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3, vgg_32_forward, 32, 32, 32, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3, vgg_32_gradInput, 32, 32, 32, Pass::GradInput)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3, vgg_32_gradParameters, 32, 32, 32, Pass::GradParameters)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3, vgg_64_forward, 64, 64, 16, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3, vgg_64_gradInput, 64, 64, 16, Pass::GradInput)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3, vgg_64_gradParameters, 64, 64, 16, Pass::GradParameters)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3, resnet_32_forward, 32, 32, 14, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3, resnet_32_gradInput, 32, 32, 14, Pass::GradInput)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3, resnet_32_gradParameters, 32, 32, 14, Pass::GradParameters)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3, resnet_64_forward, 64, 64, 7, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3, resnet_64_gradInput, 64, 64, 7, Pass::GradInput)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3, resnet_64_gradParameters, 64, 64, 7, Pass::GradParameters)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3Strided, resnet_s2_16_forward, 16, 32, 28, Pass::Forward)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3Strided, resnet_s2_16_gradInput, 16, 32, 28, Pass::GradInput)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3Strided, resnet_s2_16_gradParameters, 16, 32, 28, Pass::GradParameters)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3Strided, resnet_s2_32_forward, 32, 64, 14, Pass::Forward)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3Strided, resnet_s2_32_gradInput, 32, 64, 14, Pass::GradInput)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(convolution3x3Strided, resnet_s2_32_gradParameters, 32, 64, 14, Pass::GradParameters)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(shortcut, shortcut_16_forward, 16, 32, 28, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(shortcut, shortcut_16_gradInput, 16, 32, 28, Pass::GradInput)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(shortcut, shortcut_16_gradParameters, 16, 32, 28, Pass::GradParameters)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(batchNorm, bn_32_forward, 32, 32, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(batchNorm, bn_32_backward, 32, 32, Pass::Backward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(batchNorm, bn_64_forward, 64, 16, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(batchNorm, bn_64_backward, 64, 16, Pass::Backward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(batchNorm, bn_resnet_32_forward, 32, 14, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(batchNorm, bn_resnet_32_backward, 32, 14, Pass::Backward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(batchNorm, bn_resnet_64_forward, 64, 7, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(batchNorm, bn_resnet_64_backward, 64, 7, Pass::Backward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(relu, relu_forward, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(relu, relu_backward, Pass::GradInput)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(dropout, dropout_forward, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(dropout, dropout_backward, Pass::GradInput)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(linear, fc1_forward, 800, 500, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(linear, fc1_gradInput, 800, 500, Pass::GradInput)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(linear, fc1_gradParameters, 800, 500, Pass::GradParameters)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(linear, fc2_forward, 500, 10, Pass::Forward)->Arg(1)->UseRealTime();
BENCHMARK_CAPTURE(linear, fc2_gradInput, 500, 10, Pass::GradInput)->Arg(1)->UseRealTime();
BENCHMARK_CAPTURE(linear, fc2_gradParameters, 500, 10, Pass::GradParameters)->Arg(1)->UseRealTime();
// The MLP's layers, 784 -> 1024 (its gradInput unused in training), 1024 -> 1024 and 1024 -> 10.
BENCHMARK_CAPTURE(linear, mlp1_forward, 784, 1024, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(linear, mlp1_gradParameters, 784, 1024, Pass::GradParameters)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(linear, mlp2_forward, 1024, 1024, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(linear, mlp2_gradInput, 1024, 1024, Pass::GradInput)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(linear, mlp2_gradParameters, 1024, 1024, Pass::GradParameters)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(linear, mlp3_forward, 1024, 10, Pass::Forward)->Arg(1)->UseRealTime();
BENCHMARK_CAPTURE(linear, mlp3_gradInput, 1024, 10, Pass::GradInput)->Arg(1)->UseRealTime();
BENCHMARK_CAPTURE(linear, mlp3_gradParameters, 1024, 10, Pass::GradParameters)->Arg(1)->UseRealTime();
BENCHMARK_CAPTURE(maxPooling, pool1_forward, 20, 24, Pass::Forward)->Arg(1)->UseRealTime();
BENCHMARK_CAPTURE(maxPooling, pool1_backward, 20, 24, Pass::GradInput)->Arg(1)->UseRealTime();
BENCHMARK_CAPTURE(maxPooling, pool2_forward, 50, 8, Pass::Forward)->Arg(1)->UseRealTime();
BENCHMARK_CAPTURE(maxPooling, pool2_backward, 50, 8, Pass::GradInput)->Arg(1)->UseRealTime();

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  measureYardsticks();
  // In the context printed above the table: the CPU, our kernels' level, OpenBLAS's kernels.
  benchmark::AddCustomContext("nn::cpuInfo()", nn::cpuInfo());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
