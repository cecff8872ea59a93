#!/usr/bin/env bash
# Data-parallel training on the CPU against what two cores give with nothing shared: LeNet
# training images/s, one compute thread a device or process, in alternating rounds of one epoch
# each (the example's images/s over the epoch, first step included). Each round runs
#   one    - cpu:0 alone at the global batch (BATCH, 256);
#   two    - two independent processes at once, each on cpu:0 at half the batch: their images/s
#            summed, the measure of the next two;
#   table  - a DataParallelTable on cpu:0,cpu:1 at the global batch (half of it a replica);
#   ranks  - two ranks under mpirun (DistributedDataParallelTable), half the batch each, where
#            mpirun is installed (RANKS=0 leaves them out).
# Prints each round, the medians, the table's speed-up over one device, and the table's and the
# ranks' share of the two processes' images/s, each round's and the medians'.
# ROUNDS (3), LIMIT (training images per round; the whole set, 60000, if unset), BATCH (256) and
# LENET (the example's binary, to measure another build; bazel-bin/examples/lenet) may be set in
# the environment. `--profile` of the example shows where a step of each goes.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh dataset-fashion-mnist
bazel build -c opt //examples:lenet >&2
# Every instruction set of the CPU, as the comparisons with PyTorch (bench/compare_common.py):
# the library chooses its and OpenBLAS's kernels for the CPU unless ISA=same keeps the
# environment's NN_CPU_ISA and OPENBLAS_CORETYPE.
[ "${ISA:-native}" = same ] || unset NN_CPU_ISA OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
rounds=${ROUNDS:-3}
batch=${BATCH:-256}
half=$((batch / 2))
limit=()
[ -n "${LIMIT:-}" ] && limit=(--limit "$LIMIT")
lenet=${LENET:-bazel-bin/examples/lenet}
ranks=${RANKS:-1}
command -v mpirun >/dev/null || ranks=0
launch=(mpirun -np 2 --oversubscribe --bind-to none)
[ "$(id -u)" -eq 0 ] && launch+=(--allow-run-as-root)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# train NAME BATCH [example arguments...]: one epoch, under the command in `prefix` where one is
# set (mpirun), its metrics in $work/NAME.jsonl
prefix=()
train() {
  local name=$1 size=$2
  shift 2
  rm -f "$work/$name.jsonl"  # the example appends to its metrics file
  "${prefix[@]}" "$lenet" --epochs 1 --batch-size "$size" --threads 1 "${limit[@]}" --metrics "$work/$name.jsonl" \
    "$@" >/dev/null 2>&1
}
speed() { sed -E 's/.*"images_per_second": ([0-9.]+).*/\1/' "$work/$1.jsonl"; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ratio() { echo "$1 $2" | awk '{printf "%.2f", $1 / $2}'; }

printf "%5s %10s %16s %10s %10s   %-12s %s\n" round "one" "two processes" "table" "ranks" "table/two" "ranks/two"
for r in $(seq "$rounds"); do
  train one "$batch" --devices cpu:0
  train a "$half" --devices cpu:0 &
  train b "$half" --devices cpu:0 --seed 2 &
  wait
  train table "$batch" --devices cpu:0,cpu:1
  one=$(speed one)
  two=$(echo "$(speed a) $(speed b)" | awk '{print $1 + $2}')
  table=$(speed table)
  tableShare=$(ratio "$table" "$two")
  echo "$one" >>"$work/ones"
  echo "$two" >>"$work/twos"
  echo "$table" >>"$work/tables"
  echo "$tableShare" >>"$work/table-shares"
  rank="-" rankShare="-"
  if [ "$ranks" != 0 ]; then
    prefix=("${launch[@]}")
    train ranks "$half" --devices cpu:0
    prefix=()
    rank=$(printf "%.0f" "$(speed ranks)")
    rankShare=$(ratio "$rank" "$two")
    echo "$rank" >>"$work/rank-speeds"
    echo "$rankShare" >>"$work/rank-shares"
  fi
  printf "%5d %10.0f %16.0f %10.0f %10s   %-12s %s\n" "$r" "$one" "$two" "$table" "$rank" "$tableShare" "$rankShare"
done
m1=$(median <"$work/ones")
m2=$(median <"$work/twos")
mt=$(median <"$work/tables")
mr="-" shareRanks="-"
if [ "$ranks" != 0 ]; then
  mr=$(printf "%.0f" "$(median <"$work/rank-speeds")")
  shareRanks="$(ratio "$mr" "$m2") (rounds $(median <"$work/rank-shares"))"
fi
printf "%5s %10.0f %16.0f %10.0f %10s   %-12s %s\n" median "$m1" "$m2" "$mt" "$mr" \
  "$(ratio "$mt" "$m2") (rounds $(median <"$work/table-shares"))" "$shareRanks"
echo "speed-up of the table over one device: $(ratio "$mt" "$m1")x"
