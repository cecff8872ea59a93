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
# ONNX Runtime and TensorBoard from PyPI, the references of the ONNX export and event file
# tests; without them those are skipped, not passed.
references=()
if python=$(tools/reference-venv.sh); then references=(--test_env=NN_REFERENCE_PYTHON="$python"); fi
bazel test //... "${references[@]}" "$@" 2>&1 | tee "$output"
tools/test-summary.sh "$output" "$@"
