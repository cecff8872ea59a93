#!/usr/bin/env bash
# Runs the built tests again at the CPU kernels' levels below this machine's (nn/cpu/Isa.h,
# NN_CPU_ISA), so that one machine tests the routes and promises of lesser CPUs: the whole suite
# at avx2 where this CPU has AVX-512, and the CPU kernels' tests at generic (the routes of a CPU
# with no kernels of our own, as aarch64's). Tests skipped for a route a level cannot run say so.
# Prints each level's counts; exits non-zero if any test failed. Extra arguments go to `bazel test`.
set -uo pipefail
cd "$(dirname "$0")/.."

# The kernel tests: every route choice, every promise about threads and levels.
KERNEL_TESTS=(
  //tests/cpu:isa_test //tests/cpu:linear_direct_test //tests/modules:linear_test //tests/parallel:parallel_test
  //tests/modules:convolution_test //tests/cpu:convolution_direct_test //tests/cpu:convolution_shallow_test
  //tests/cpu:convolution_winograd_test //tests/modules:batchnorm_test //tests/modules:activation_test
  //tests/modules:softsign_logsigmoid_test
)

has_avx512() {
  local f
  for f in avx512f avx512bw avx512dq avx512vl; do grep -qw "$f" /proc/cpuinfo || return 1; done
}

status=0
run_level() {  # LEVEL TARGETS...
  local level=$1 output counts
  shift
  output=$(mktemp)
  bazel test --test_env=NN_CPU_ISA="$level" "${extra[@]}" "$@" >"$output" 2>&1
  grep -E "^//[a-z_/]*:.*(FAILED|NO STATUS|TIMEOUT)" "$output"
  if ! counts=$(tools/test-summary.sh "$output" --scope="set(${*})" "${extra[@]}" 2>&1 | tail -n 1); then status=1; fi
  echo "at NN_CPU_ISA=$level: $counts"
  rm -f "$output"
}

extra=("$@")
if grep -q '^flags' /proc/cpuinfo 2>/dev/null && grep -qw avx2 /proc/cpuinfo; then
  has_avx512 && run_level avx2 //...
  run_level generic "${KERNEL_TESTS[@]}"
fi
exit "$status"
