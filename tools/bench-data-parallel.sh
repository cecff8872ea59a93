#!/usr/bin/env bash
# Data-parallel training on the CPU against what two cores give: LeNet training images/s, one
# compute thread a device or process, in alternating rounds (one, two, meeting, table, ranks; one,
# two, ...) of one epoch each (the example's images/s over the epoch, first step included).
# Each round runs
#   one      - cpu:0 alone at the global batch (BATCH, 256);
#   two      - two independent processes at once, each on cpu:0 at half the batch: their images/s
#              summed, what two cores give with nothing shared;
#   meeting  - two processes as `two`, that meet every step and exchange nothing
#              (bench/lenet_meeting.cpp): their images/s summed, the synchronous limit, the
#              measure of the next two;
#   table    - a DataParallelTable on cpu:0,cpu:1 at the global batch (half of it a replica);
#   ranks    - two ranks under mpirun (DistributedDataParallelTable), half the batch each, where
#              mpirun is installed (RANKS=0 leaves them out).
# Prints the CPU, the load average before and after, each round, the medians, the table's and the
# ranks' share of the meeting processes' images/s (each round's and the medians'), the meeting's
# share of the independent processes' and the meeting processes' wait per step.
# ROUNDS (7), LIMIT (training images a process or a run trains per round, 15360; 0 for the whole
# set, 60000), BATCH (256), LENET and MEETING (the binaries, to measure another build;
# bazel-bin/examples/lenet and bazel-bin/bench/lenet_meeting, built here unless both are set) may
# be set in the environment, and BATCH_THREAD (auto, on or off: the examples' --batch-thread for
# every run; unset, each run's own default, auto).
# `--profile` of the example shows where a step of each goes.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh dataset-fashion-mnist
# Built here unless both binaries are given; the build's server is then shut down, as it takes part
# of a core even while idle, enough to move the ratios (stop one left from earlier builds too).
if [ -z "${LENET:-}" ] || [ -z "${MEETING:-}" ]; then
  bazel build -c opt //examples:lenet //bench:lenet_meeting >&2
  bazel shutdown >&2
fi
# Every instruction set of the CPU, as the comparisons with PyTorch (bench/compare_common.py):
# the library chooses its and OpenBLAS's kernels for the CPU unless ISA=same keeps the
# environment's NN_CPU_ISA and OPENBLAS_CORETYPE.
[ "${ISA:-native}" = same ] || unset NN_CPU_ISA OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
rounds=${ROUNDS:-7}
batch=${BATCH:-256}
half=$((batch / 2))
limit=()
[ "${LIMIT:-15360}" != 0 ] && limit=(--limit "${LIMIT:-15360}")
batchThread=()
[ -n "${BATCH_THREAD:-}" ] && batchThread=(--batch-thread "$BATCH_THREAD")
lenet=${LENET:-bazel-bin/examples/lenet}
meeting=${MEETING:-bazel-bin/bench/lenet_meeting}
ranks=${RANKS:-1}
command -v mpirun >/dev/null || ranks=0
launch=(mpirun -np 2 --oversubscribe --bind-to none)
[ "$(id -u)" -eq 0 ] && launch+=(--allow-run-as-root)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# train NAME BATCH [example arguments...]: one epoch of the program in `program`, under the
# command in `prefix` where one is set (mpirun), its metrics in $work/NAME.jsonl, its stderr in
# $work/NAME.err
program=$lenet
prefix=()
train() {
  local name=$1 size=$2
  shift 2
  rm -f "$work/$name.jsonl"  # the example appends to its metrics file
  "${prefix[@]}" "$program" --epochs 1 --batch-size "$size" --threads 1 "${limit[@]}" "${batchThread[@]}" \
    --metrics "$work/$name.jsonl" "$@" >/dev/null 2>"$work/$name.err"
}
speed() { sed -E 's/.*"images_per_second": ([0-9.]+).*/\1/' "$work/$1.jsonl"; }
# A meeting process's wait per step, in ms (the last field of its line on stderr).
waited() { sed -nE 's/^lenet_meeting: .* ([0-9.]+) ms a step$/\1/p' "$work/$1.err"; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ratio() { echo "$1 $2" | awk '{printf "%.3f", $1 / $2}'; }
sum() { echo "$1 $2" | awk '{print $1 + $2}'; }

cpu() { sed -n "s/^$1[[:space:]]*: //p" /proc/cpuinfo | head -1; }
echo "CPU: $(cpu 'model name') (family $(cpu 'cpu family'), model $(cpu model), $(nproc) cores)"
echo "load before: $(uptime)"
echo "LeNet, one epoch of ${LIMIT:-15360} images a run (0: all), global batch $batch, $rounds alternating rounds, --batch-thread ${BATCH_THREAD:-auto}"
printf "%5s %7s %7s %8s %7s %7s   %-13s %-13s %-11s %s\n" round one two meeting table ranks \
  table/meeting ranks/meeting meeting/two "wait ms/step"
for r in $(seq "$rounds"); do
  train one "$batch" --devices cpu:0
  train a "$half" --devices cpu:0 &
  train b "$half" --devices cpu:0 --seed 2 &
  wait
  program=$meeting
  train ma "$half" --devices cpu:0 --meet "$work/meeting-$r" --meet-rank 0 &
  train mb "$half" --devices cpu:0 --seed 2 --meet "$work/meeting-$r" --meet-rank 1 &
  wait
  program=$lenet
  train table "$batch" --devices cpu:0,cpu:1
  one=$(speed one)
  two=$(sum "$(speed a)" "$(speed b)")
  met=$(sum "$(speed ma)" "$(speed mb)")
  wait=$(echo "$(waited ma) $(waited mb)" | awk '{printf "%.2f", ($1 + $2) / 2}')
  table=$(speed table)
  tableShare=$(ratio "$table" "$met")
  metShare=$(ratio "$met" "$two")
  for v in one two met wait table tableShare metShare; do echo "${!v}" >>"$work/all-$v"; done
  rank="-" rankShare="-"
  if [ "$ranks" != 0 ]; then
    prefix=("${launch[@]}")
    train ranks "$half" --devices cpu:0
    prefix=()
    rank=$(speed ranks)
    rankShare=$(ratio "$rank" "$met")
    echo "$rank" >>"$work/all-rank"
    echo "$rankShare" >>"$work/all-rankShare"
    rank=$(printf "%.0f" "$rank")
  fi
  printf "%5d %7.0f %7.0f %8.0f %7.0f %7s   %-13s %-13s %-11s %s\n" "$r" "$one" "$two" "$met" "$table" "$rank" \
    "$tableShare" "$rankShare" "$metShare" "$wait"
done
m() { median <"$work/all-$1"; }
mr="-" rankRatio="-" rankShares="-"
if [ "$ranks" != 0 ]; then
  mr=$(printf "%.0f" "$(m rank)")
  rankRatio=$(ratio "$(m rank)" "$(m met)")
  rankShares=$(printf "%.3f" "$(m rankShare)")
fi
printf "%5s %7.0f %7.0f %8.0f %7.0f %7s   %-13s %-13s %-11s %s\n" median "$(m one)" "$(m two)" "$(m met)" "$(m table)" \
  "$mr" "$(ratio "$(m table)" "$(m met)")" "$rankRatio" "$(ratio "$(m met)" "$(m two)")" "$(m wait)"
echo "medians of the rounds' ratios: table/meeting $(printf "%.3f" "$(m tableShare)"), ranks/meeting $rankShares," \
  "meeting/two $(printf "%.3f" "$(m metShare)")"
echo "speed-up of the table over one device: $(ratio "$(m table)" "$(m one)")x"
echo "load after: $(uptime)"
