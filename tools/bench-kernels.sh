#!/usr/bin/env bash
# Microbenchmarks of LeNet's kernels (bench/kernels.cpp, Google Benchmark): convolution and
# linear layers in GFLOP/s, max-pooling in GB/s, forward and backward. Installs Debian's
# libbenchmark-dev if missing; arguments go to the benchmark (e.g. --benchmark_filter=conv2).
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh libbenchmark-dev
bazel build //bench:kernels >&2
exec bazel-bin/bench/kernels "$@"
