#!/usr/bin/env bash
# Microbenchmarks of the kernels of the benchmark suite (bench/kernels.cpp, Google Benchmark):
# convolutions and linear layers in GFLOP/s, batch normalisation, ReLU, Dropout and max pooling
# in GB/s, each also as a share of the machine's sgemm rate or copy bandwidth. Installs Debian's
# libbenchmark-dev if missing; arguments go to the benchmark (e.g. --benchmark_filter=conv2).
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh libbenchmark-dev
bazel build //bench:kernels >&2
# Every instruction set of the CPU, as the comparisons with PyTorch (bench/compare_common.py):
# the library chooses its and OpenBLAS's kernels for the CPU unless ISA=same keeps the
# environment's NN_CPU_ISA and OPENBLAS_CORETYPE.
[ "${ISA:-native}" = same ] || unset NN_CPU_ISA OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
exec bazel-bin/bench/kernels "$@"
