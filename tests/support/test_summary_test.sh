#!/usr/bin/env bash
# tools/test-summary.sh, the counter behind the README's test command: every test case counted,
# and every way of finding nothing to count a failure. Runs the script against a fake `bazel`
# and fake test logs in a folder of its own; prints the count line the script itself reads.
set -uo pipefail
script="$(pwd)/tools/test-summary.sh"
work=${TEST_TMPDIR:-$(mktemp -d)}/summary
passed=0 failed=0

# check NAME EXPECTED_EXIT EXPECTED_LAST_LINE [EXPECTED_SKIPPED]: runs the copied script on
# $work/output.txt; where EXPECTED_SKIPPED is given, the line before the last starts with it.
check() {
  local name=$1 want_exit=$2 want_line=$3 want_skipped=${4:-} out got_exit last before
  out=$(cd "$work" && PATH="$work/bin:$PATH" tools/test-summary.sh output.txt 2>/dev/null)
  got_exit=$?
  last=$(echo "$out" | tail -n 1)
  before=$(echo "$out" | tail -n 2 | head -n 1)
  if [ "$got_exit" = "$want_exit" ] && [ "$last" = "$want_line" ] &&
    { [ -z "$want_skipped" ] || [ "${before%% (*}" = "$want_skipped" ]; }; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAILED: $name: exit $got_exit (expected $want_exit), last lines '$before' '$last' (expected '$want_skipped' '$want_line')"
  fi
}

# fake_query PRINTED EXIT: `bazel cquery` prints PRINTED and exits with EXIT.
fake_query() {
  printf '#!/bin/sh\nprintf "%s"\nexit %s\n' "$1" "$2" > "$work/bin/bazel"
  chmod +x "$work/bin/bazel"
}

rm -rf "$work" && mkdir -p "$work/bin" "$work/tools" "$work/bazel-testlogs/tests/a" "$work/bazel-testlogs/tests/b"
cp "$script" "$work/tools/"
echo "nn-test-cases: 5 passed, 0 failed, 2 skipped" > "$work/bazel-testlogs/tests/a/test.log"
echo "nn-test-cases: 3 passed, 1 failed, 0 skipped" > "$work/bazel-testlogs/tests/b/test.log"
printf '//tests:a    PASSED in 0.1s\n//tests:b    FAILED in 0.2s\n' > "$work/output.txt"

fake_query "//tests:a (1a2b3c)\n//tests:b (1a2b3c)\n" 0
check "two targets are added up" 1 "8 passed, 1 failed" "2 skipped"
echo "nn-test-cases: 3 passed, 0 failed, 0 skipped" > "$work/bazel-testlogs/tests/b/test.log"
printf '//tests:a    PASSED in 0.1s\n//tests:b    (cached) PASSED in 0.2s\n' > "$work/output.txt"
check "all passed exits 0" 0 "8 passed, 0 failed" "2 skipped"
fake_query '//tests:a\n//tests:b\n//tests:c\n' 0
check "a target that did not run is a failure" 1 "8 passed, 1 failed" "2 skipped"
echo "nn-test-cases: 0 passed, 0 failed, 0 skipped" > "$work/bazel-testlogs/tests/b/test.log"
fake_query '//tests:a\n//tests:b\n' 0
check "a target that counts no test case is a failure" 1 "5 passed, 1 failed" "2 skipped"
echo "nn-test-cases: 3 passed, 0 failed, 0 skipped" > "$work/bazel-testlogs/tests/b/test.log"
printf '//tests:a    PASSED in 0.1s\n//tests:b    FAILED in 0.2s\n' > "$work/output.txt"
check "a target FAILED after its log counted no failure (a leak report at exit) is a failure" 1 "8 passed, 1 failed" "2 skipped"
printf '//tests:a    PASSED in 0.1s\n//tests:b    (cached) FAILED in 0.2s\n' > "$work/output.txt"
check "a cached FAILED target whose log counted no failure is a failure" 1 "8 passed, 1 failed" "2 skipped"
fake_query '' 0
check "no test target at all is a failure" 1 "0 passed, 1 failed"
fake_query 'ERROR: no such package' 1
check "a query that fails is a failure" 1 "0 passed, 1 failed"

echo "nn-test-cases: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
