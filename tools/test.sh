#!/usr/bin/env bash
# Runs every test: installs missing Debian packages, builds with Bazel, runs all test targets,
# and ends with one line counting test cases: "N passed, N failed, N skipped".
# Extra arguments go to `bazel test`.
set -uo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh || exit 1
output=$(mktemp)
trap 'rm -f "$output"' EXIT
bazel test //... "$@" 2>&1 | tee "$output"
tools/test-summary.sh "$output"
