#!/usr/bin/env bash
# LeNet training speed beside PyTorch on the CPU, in one run: this project and PyTorch train the
# same LeNet on the same data, alternately, on 1 thread, on 2 threads, and data-parallel
# (DataParallelTable on cpu:0,cpu:1 against DistributedDataParallel over gloo, 2 processes x 1
# thread) and, where mpirun is found, 2 processes of 1 thread (DistributedDataParallelTable on
# MPI) against the same DDP; prints images/s, the ratio, GFLOP/s, the share of the sgemm rate
# measured in the same run, peak RSS and test accuracy (bench/lenet_compare.py).
#
# The peer is the newest torch on PyPI, installed if missing into a virtual environment outside
# the repository (TORCH_VENV, default ~/.cache/nn-bench/torch-venv); Debian's python3-torch is a
# second row, and the only one if PyPI's cannot be installed.
# Both sides use every instruction set of the CPU (NN_CPU_ISA, OPENBLAS_CORETYPE and
# OPENBLAS_L2_SIZE are unset for every run); ISA=same keeps the environment's and, where
# NN_CPU_ISA=avx2 (or OPENBLAS_CORETYPE) holds this project to AVX2, holds PyTorch to AVX2 as
# well (bench/compare_common.py).
# ROUNDS (3) and LIMIT (training images per run, 15360) may be set in the environment.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-3}
limit=${LIMIT:-15360}

tools/install-deps.sh dataset-fashion-mnist python3 python3-venv python3-torch
bazel build //examples:lenet //bench:sgemm_rate >&2

source tools/bench-peers.sh

exec /usr/bin/python3 bench/lenet_compare.py --rounds "$rounds" --limit "$limit" "${peers[@]}"
