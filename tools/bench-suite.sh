#!/usr/bin/env bash
# The benchmark suite beside PyTorch on the CPU: LeNet, an MLP, a VGG-style CNN with batch
# normalisation and the residual network of examples/resnet (bench/Networks.h), each trained on
# synthetic data by this project (bench/train_synthetic) and by PyTorch
# (bench/networks_torch.py), alternately, on 1 thread, on 2 threads, and data-parallel
# (DataParallelTable on cpu:0,cpu:1 against DistributedDataParallel over gloo, 2 processes x 1
# thread); prints images/s, the ratio, GFLOP/s, the share of the sgemm rate measured in the same
# run and peak RSS (bench/suite_compare.py). Peers and instruction sets as tools/bench-lenet.sh
# (tools/bench-peers.sh; every instruction set free on both sides unless ISA=same).
# ROUNDS (3), NETWORKS (lenet,mlp,vgg,resnet), SCALE (1: multiplies each network's timed steps)
# BATCH (128), CONFIGS (1t,2t,dp: 1 thread, 2 threads, 2 devices) and PRECISION (highest; medium:
# this project's bfloat16 products, nn/runtime/MatmulPrecision.h, against PyTorch's
# torch.autocast("cpu", dtype=torch.bfloat16); autocast: this project's nn::Autocast of bfloat16
# against the same) may be set in the environment; arguments go to
# bench/suite_compare.py (--no-amx: at medium, this project's products on vdpbf16ps, not AMX).
#
# One network's profile: bazel-bin/bench/train_synthetic --network vgg --profile
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh python3 python3-venv python3-torch
bazel build //bench:train_synthetic //bench:sgemm_rate >&2

DEBIAN_TORCH=${DEBIAN_TORCH:-0}
source tools/bench-peers.sh

exec /usr/bin/python3 bench/suite_compare.py --rounds "${ROUNDS:-3}" --networks "${NETWORKS:-lenet,mlp,vgg,resnet}" \
  --scale "${SCALE:-1}" --batch-size "${BATCH:-128}" --configs "${CONFIGS:-1t,2t,dp}" \
  --precision "${PRECISION:-highest}" "${peers[@]}" "$@"
