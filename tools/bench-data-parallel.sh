#!/usr/bin/env bash
# Data-parallel speed-up on the CPU: LeNet training images/s with a DataParallelTable on
# cpu:0,cpu:1 (one compute thread each) against cpu:0 alone (one thread), global batch 256
# (BATCH), in alternating rounds of one epoch each (the example's images/s over the epoch, first
# step included). Prints each round, the medians and their ratio.
# ROUNDS (3), LIMIT (training images per round; the whole set, 60000, if unset) and BATCH (256)
# may be set in the environment.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh dataset-fashion-mnist
bazel build -c opt //examples:lenet >&2
# Every instruction set of the CPU, as the comparisons with PyTorch (bench/compare_common.py):
# OpenBLAS picks its kernels unless ISA=same keeps the environment's OPENBLAS_CORETYPE.
[ "${ISA:-native}" = same ] || unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
rounds=${ROUNDS:-3}
limit=()
[ -n "${LIMIT:-}" ] && limit=(--limit "$LIMIT")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() {  # devices -> images per second of the training pass
  rm -f "$work/m.jsonl"  # the example appends to its metrics file
  bazel-bin/examples/lenet --epochs 1 --batch-size "${BATCH:-256}" --threads 1 "${limit[@]}" --devices "$1" \
    --metrics "$work/m.jsonl" >/dev/null 2>&1
  sed -E 's/.*"images_per_second": ([0-9.]+).*/\1/' "$work/m.jsonl"
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "round  cpu:0 (1 thread)  cpu:0,cpu:1 (1 thread each)   images/s"
for r in $(seq "$rounds"); do
  one=$(run cpu:0)
  two=$(run cpu:0,cpu:1)
  echo "$one" >>"$work/one"
  echo "$two" >>"$work/two"
  printf "%5d  %16.0f  %27.0f\n" "$r" "$one" "$two"
done
m1=$(median <"$work/one")
m2=$(median <"$work/two")
printf "median %15.0f  %27.0f   speed-up %.2fx\n" "$m1" "$m2" "$(echo "$m2 $m1" | awk '{print $1 / $2}')"
