#!/usr/bin/env bash
# The tools against misuse: tools/gpu-bundle.sh refuses to replace a folder it did not make (it
# ran `rm -rf DIR` whatever DIR held, and took a relative DIR from the repository's root), and
# tools/plot-metrics.py says what is wrong with a metrics file or an output name, never with a
# traceback. The cases that draw need matplotlib and are skipped without it.
# Prints the "nn-test-cases:" line that tools/test-summary.sh adds up.
set -uo pipefail
passed=0 failed=0 skipped=0
root=$PWD
scratch=$(mktemp -d "${TEST_TMPDIR:-/tmp}/tools_test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

check() {  # NAME, then a command that succeeds where the case passes
  local name=$1
  shift
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $name" >&2; fi
}

# Runs a command, keeping its status and its standard error.
run() {
  status=0
  errors=$("$@" 2>&1 >/dev/null) || status=$?
}

bundle_refuses_foreign_folder() {
  mkdir -p "$scratch/mine" && echo keep >"$scratch/mine/file"
  run "$root/tools/gpu-bundle.sh" "$scratch/mine"
  [ "$status" -ne 0 ] && grep -q "is not a bundle this script made" <<<"$errors" &&
    [ "$(cat "$scratch/mine/file")" = keep ]
}
check "gpu-bundle.sh refuses a folder it did not make" bundle_refuses_foreign_folder

bundle_takes_relative_paths_from_caller() {
  mkdir -p "$scratch/caller/docs" && echo keep >"$scratch/caller/docs/file"
  (cd "$scratch/caller" && run "$root/tools/gpu-bundle.sh" docs &&
    [ "$status" -ne 0 ] && grep -q "$scratch/caller/docs exists" <<<"$errors") &&
    [ -f "$root/tools/gpu-bundle.sh" ] && [ "$(cat "$scratch/caller/docs/file")" = keep ]
}
check "gpu-bundle.sh takes a relative folder from the caller's" bundle_takes_relative_paths_from_caller

plot_refuses() {  # METRICS-CONTENT EXPECTED-MESSAGE [OUTPUT]
  local metrics=$scratch/metrics.json
  printf '%b' "$1" >"$metrics"
  run /usr/bin/python3 tools/plot-metrics.py "$metrics" "${3:-$scratch/out.png}"
  if [ "$status" -eq 0 ] || ! grep -qF -- "$2" <<<"$errors" || grep -q Traceback <<<"$errors"; then
    echo "plot-metrics.py on '$1': status $status, said: $errors" >&2
    return 1
  fi
}
good='{"epoch": 1, "train_loss": 0.5, "test_accuracy": 0.8}\n'
check "plot-metrics.py: a line without train_loss" plot_refuses '{"epoch": 1, "test_accuracy": 0.8}\n' "no 'train_loss'"
check "plot-metrics.py: an infinite epoch" plot_refuses '{"epoch": Infinity, "train_loss": 1, "test_accuracy": 0.8}\n' \
  "'epoch' is inf, not an epoch number"
check "plot-metrics.py: a loss as text" plot_refuses '{"epoch": 1, "train_loss": "0.5", "test_accuracy": 0.8}\n' \
  "'train_loss' is \"0.5\", not a number"
check "plot-metrics.py: a file that is not UTF-8" plot_refuses "$good"'\xff\xfe\n' "not UTF-8 text"
plot_missing_file() {
  run /usr/bin/python3 tools/plot-metrics.py "$scratch/none.json" "$scratch/out.png"
  [ "$status" -ne 0 ] && grep -q "cannot read $scratch/none.json" <<<"$errors" && ! grep -q Traceback <<<"$errors"
}
check "plot-metrics.py: a missing file" plot_missing_file

if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  check "plot-metrics.py: an output format matplotlib does not write" plot_refuses "$good" \
    "cannot write '.xyz' files; one of" "$scratch/out.xyz"
  plot_draws() {
    /usr/bin/python3 tools/plot-metrics.py "$scratch/metrics.json" "$scratch/curves.png" &&
      [ "$(head -c 4 "$scratch/curves.png" | tail -c 3)" = PNG ]
  }
  printf '%b' "$good" >"$scratch/metrics.json"
  check "plot-metrics.py draws a metrics file" plot_draws
else
  echo "skipped 2 test case(s): matplotlib (Debian's python3-matplotlib) is not installed"
  skipped=2
fi

echo "nn-test-cases: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
