// The machine's single-precision GEMM rate through nn::blas::gemm (OpenBLAS), the yardstick
// tools/bench-lenet.sh divides the training speed by: n x n x n products on T threads.
// Usage: sgemm_rate THREADS [N (1024)] [REPEATS (7)]; prints one JSON line with the median and
// the best GFLOP/s of the repeats, after one product that is not counted (it warms up threads
// and caches), the name of the kernels OpenBLAS runs and the library's line on the CPU
// (nn::cpuInfo: the CPU, our kernels' level, the BLAS's kernels and who chose them).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "nn/cpu/Blas.h"
#include "nn/runtime/ComputeThreads.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: sgemm_rate THREADS [N] [REPEATS]\n");
    return 2;
  }
  const int threads = std::atoi(argv[1]);
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 1024;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 7;
  if (threads < 1 || n < 1 || repeats < 1) {
    std::fprintf(stderr, "sgemm_rate: expected positive THREADS, N and REPEATS\n");
    return 2;
  }
  nn::blas::setNumThreads(threads);
  const size_t count = static_cast<size_t>(n * n);
  std::vector<float> a(count), b(count), c(count);
  for (size_t i = 0; i < count; ++i) {
    a[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
    b[i] = static_cast<float>(i % 5) * 0.5f - 1.f;
  }
  std::vector<double> rates;
  for (int r = 0; r <= repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    nn::blas::gemm(false, false, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r > 0)
      rates.push_back(2e-9 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / seconds);
  }
  std::sort(rates.begin(), rates.end());
  const double median =
      rates.size() % 2 ? rates[rates.size() / 2] : (rates[rates.size() / 2 - 1] + rates[rates.size() / 2]) / 2;
  // cpuInfo() holds no quotes or backslashes: CPUID's brand string and the library's own words.
  std::printf(
      "{\"threads\": %d, \"n\": %lld, \"gflops_median\": %.2f, \"gflops_best\": %.2f, \"kernels\": \"%s\", "
      "\"cpu\": \"%s\"}\n",
      threads, static_cast<long long>(n), median, rates.back(), nn::blas::kernelName(), nn::cpuInfo().c_str());
  return 0;
}
