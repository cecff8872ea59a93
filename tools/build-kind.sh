#!/usr/bin/env bash
# Prints which build Bazel makes here, with the given options (e.g. --config=cpu): "CUDA build:
# ..." where a CUDA toolkit was found (tools/bazel/cuda_configure.bzl), "CPU build ...: why" where not.
set -uo pipefail
cd "$(dirname "$0")/.."

if ! bazel build --noshow_progress "$@" @cuda//:summary.txt >/dev/null 2>&1; then
  echo "tools/build-kind.sh: bazel could not configure the build" >&2
  bazel build "$@" @cuda//:summary.txt >&2
  exit 1
fi
cat "$(bazel info "$@" output_base 2>/dev/null)/external/cuda/summary.txt"
