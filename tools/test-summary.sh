#!/usr/bin/env bash
# Adds up the test cases of every test target and prints "N skipped", then, last, "N passed,
# N failed".
# Reads the output of `bazel test` (file $1) for each target's status: a target that passed
# or failed contributes the counts its log printed; one that failed to build, timed out or
# did not run counts as one failed test case, and so does one whose log counts no test case,
# and one that Bazel marks FAILED though its log counts no failure (a sanitizer's report at exit,
# a crash after the count line).
# Finding no test target at all is a failure too. Exits non-zero if anything failed.
# Usage: tools/test-summary.sh BAZEL_OUTPUT [--scope=PATTERN] [the options `bazel test` ran
# with]; PATTERN is the target pattern `bazel test` was given (//... unless told), the options
# (--config=cpu, say) decide which targets the build has.
set -uo pipefail
cd "$(dirname "$0")/.."
bazel_output=$1
shift
scope=//...
case "${1:-}" in
  --scope=*) scope=${1#--scope=}; shift ;;
esac

if ! targets=$(bazel cquery --noshow_progress "tests($scope)" "$@" 2>&1); then
  echo "tools/test-summary.sh: bazel cquery found no test targets:" >&2
  echo "$targets" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
targets=$(echo "$targets" | grep '^//' | sed 's/ .*//' || true)
if [ -z "$targets" ]; then
  echo "tools/test-summary.sh: no test target under $scope" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

passed=0 failed=0 skipped=0
for target in $targets; do
  status=$(grep -E "^${target}[[:space:]]" "$bazel_output" | tail -n 1 | sed -E 's/^[^[:space:]]+[[:space:]]+//')
  path=${target#//}
  log="bazel-testlogs/${path/://}/test.log"
  line=""
  case "$status" in
    PASSED* | "(cached) PASSED"* | FAILED\ in* | "(cached) FAILED"*)
      line=$(grep -h '^nn-test-cases:' "$log" 2>/dev/null | tail -n 1) ;;
  esac
  if [ -z "$line" ]; then
    echo "no test-case count from $target (${status:-no status}): counted as one failure" >&2
    failed=$((failed + 1))
    continue
  fi
  read -r p f s < <(echo "$line" | awk '{print $2, $4, $6}')
  if [ $((p + f + s)) -eq 0 ]; then
    echo "$target ran no test case: counted as one failure" >&2
    f=1
  fi
  case "$status" in
    FAILED\ in* | "(cached) FAILED"*)
      if [ "$f" -eq 0 ]; then
        echo "$target FAILED though its log counts no failed test case: counted as one failure" >&2
        f=1
      fi ;;
  esac
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
echo "${skipped} skipped (CUDA runs where no GPU can run them, and the like)"
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
