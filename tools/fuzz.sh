#!/usr/bin/env bash
# Fuzzes the file readers and what lies past them: installs clang and libFuzzer (Debian packages)
# if missing, builds the fuzz targets of tests/fuzz with --config=fuzz (AddressSanitizer and
# UBSan), and runs each for SECONDS (default 60) from its seed corpus and regression inputs: the
# IDX, image (PNG, JPEG), checkpoint and Torch7 readers, module trees loaded and run forward and backward, Tensor's views. Exits non-zero if a target
# crashes, hangs, leaks or runs out of memory, and prints where the input that did it is.
# Usage: tools/fuzz.sh [SECONDS] [bazel build options ...]
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
[[ $seconds =~ ^[0-9]+$ ]] || { echo "usage: tools/fuzz.sh [SECONDS] [bazel build options ...]" >&2; exit 2; }
shift $(($# > 0 ? 1 : 0))
targets=(idx image checkpoint torch7 module_tree tensor_view)

tools/install-deps.sh clang-14 libclang-rt-14-dev || exit 1
labels=()
for t in "${targets[@]}"; do labels+=("//tests/fuzz:${t}_fuzzer"); done
bazel build --config=fuzz "$@" "${labels[@]}" || exit 1
bin=$(bazel info --config=fuzz "$@" bazel-bin 2>/dev/null) || { echo "bazel info failed" >&2; exit 1; }

# New corpus entries, crashing inputs and logs; kept only when something was found.
work=$(mktemp -d "${TMPDIR:-/tmp}/nn-fuzz.XXXXXX")
status=0
for t in "${targets[@]}"; do
  mkdir -p "$work/$t/corpus" "$work/$t/crashes"
  # Inputs up to 16 KB, twice the largest seed; the longer regression inputs are read whole
  # by tests/io/fuzz_test.cpp.
  options=(-max_total_time="$seconds" -max_len=16384 -timeout=60 -rss_limit_mb=2048 -print_final_stats=1
    -artifact_prefix="$work/$t/crashes/")
  [ -f "tests/fuzz/$t.dict" ] && options+=(-dict="tests/fuzz/$t.dict")
  # libFuzzer adds what it finds to the first folder; the committed ones are only read.
  folders=("$work/$t/corpus")
  for f in "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t"; do [ -d "$f" ] && folders+=("$f"); done
  UBSAN_OPTIONS=print_stacktrace=1 "$bin/tests/fuzz/${t}_fuzzer" "${options[@]}" "${folders[@]}" >"$work/$t/log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t/log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$t/log")
  # Slow units (over 10 s, also from a busy machine) are written there too, but are no failure.
  crashes=$(find "$work/$t/crashes" -type f ! -name 'slow-unit-*')
  if [ "$rc" -eq 0 ] && [ -z "$crashes" ]; then
    echo "${t}_fuzzer: ${seconds} s, ${runs:-?} inputs (${rate:-?}/s), nothing found"
    continue
  fi
  status=1
  echo "${t}_fuzzer: FAILED (exit status $rc) after ${runs:-?} inputs; the end of its log:"
  grep -v -E '^#[0-9]+' "$work/$t/log" | tail -n 40
  echo "${t}_fuzzer: log $work/$t/log"
  for c in $crashes; do
    echo "${t}_fuzzer: input that failed: $c"
    echo "  reproduce: $bin/tests/fuzz/${t}_fuzzer $c"
    echo "  once the bug is fixed, commit it to tests/fuzz/regressions/$t/ (tests/io/fuzz_test.cpp reads it)"
  done
done
[ "$status" -eq 0 ] && rm -rf "$work"
exit "$status"
