// Microbenchmarks (Google Benchmark) of LeNet's kernels at batch 128: SpatialConvolution and
// Linear forward, updateGradInput and accGradParameters in GFLOP/s (one multiply-add counts
// as 2), on 1 and 2 OpenBLAS threads; SpatialMaxPooling forward and backward in GB/s (bytes
// read and written once each). Run: tools/bench-kernels.sh.
#include <benchmark/benchmark.h>

#include "nn/Parallel.h"
#include "nn/Linear.h"
#include "nn/Random.h"
#include "nn/SpatialConvolution.h"
#include "nn/SpatialMaxPooling.h"

namespace {

constexpr int64_t kBatch = 128;

enum class Pass { Forward, GradInput, GradParameters };

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
  nn::setNumThreads(static_cast<int>(state.range(0)));
  const nn::Tensor& output = module.forward(input);
  const nn::Tensor gradOutput = randomInput(output.sizes());
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
    }
    benchmark::ClobberMemory();
  }
  state.counters[unit] = benchmark::Counter(1e-9 * work, benchmark::Counter::kIsIterationInvariantRate);
}

// LeNet's convolutions: 1 -> 20 on 28x28 and 20 -> 50 on 12x12, 5x5 kernels. Every pass does
// the same multiply-adds: batch x outPlanes x outH x outW x inPlanes x 5 x 5.
void convolution(benchmark::State& state, int64_t in, int64_t out, int64_t size, Pass pass) {
  nn::SpatialConvolution conv(in, out, 5, 5);
  const int64_t outSize = size - 4;
  const double flops = 2.0 * kBatch * out * outSize * outSize * in * 25;
  run(state, conv, randomInput({kBatch, in, size, size}), pass, flops, "GFLOP");
}

// LeNet's fully connected layers, 800 -> 500 and 500 -> 10: batch x in x out multiply-adds.
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

}  // namespace

// Argument: OpenBLAS threads (pooling uses none).
BENCHMARK_CAPTURE(convolution, conv1_forward, 1, 20, 28, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution, conv1_gradInput, 1, 20, 28, Pass::GradInput)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution, conv1_gradParameters, 1, 20, 28, Pass::GradParameters)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution, conv2_forward, 20, 50, 12, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution, conv2_gradInput, 20, 50, 12, Pass::GradInput)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(convolution, conv2_gradParameters, 20, 50, 12, Pass::GradParameters)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(linear, fc1_forward, 800, 500, Pass::Forward)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(linear, fc1_gradInput, 800, 500, Pass::GradInput)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(linear, fc1_gradParameters, 800, 500, Pass::GradParameters)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(linear, fc2_forward, 500, 10, Pass::Forward)->Arg(1)->UseRealTime();
BENCHMARK_CAPTURE(linear, fc2_gradInput, 500, 10, Pass::GradInput)->Arg(1)->UseRealTime();
BENCHMARK_CAPTURE(linear, fc2_gradParameters, 500, 10, Pass::GradParameters)->Arg(1)->UseRealTime();
BENCHMARK_CAPTURE(maxPooling, pool1_forward, 20, 24, Pass::Forward)->Arg(1)->UseRealTime();
BENCHMARK_CAPTURE(maxPooling, pool1_backward, 20, 24, Pass::GradInput)->Arg(1)->UseRealTime();
BENCHMARK_CAPTURE(maxPooling, pool2_forward, 50, 8, Pass::Forward)->Arg(1)->UseRealTime();
BENCHMARK_CAPTURE(maxPooling, pool2_backward, 50, 8, Pass::GradInput)->Arg(1)->UseRealTime();

BENCHMARK_MAIN();
