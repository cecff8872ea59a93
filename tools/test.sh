#!/usr/bin/env bash
# Runs every test: installs missing Debian packages, builds with Bazel, runs all test targets,
# and ends with a line counting skipped test cases, then, last, "N passed, N failed". The first line
# says which build runs: the CUDA build (a CUDA toolkit was found) or the CPU build.
# Extra arguments go to `bazel test` (e.g. --config=cpu for the CPU build on a CUDA machine).
set -uo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh || exit 1
tools/build-kind.sh "$@" || exit 1
output=$(mktemp)
trap 'rm -f "$output"' EXIT
# ONNX Runtime from PyPI for the ONNX export tests; without it they are skipped, not passed.
onnx=()
if python=$(tools/onnxruntime-venv.sh); then onnx=(--test_env=NN_ONNXRUNTIME_PYTHON="$python"); fi
bazel test //... "${onnx[@]}" "$@" 2>&1 | tee "$output"
tools/test-summary.sh "$output" "$@"
