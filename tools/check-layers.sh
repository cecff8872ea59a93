#!/usr/bin/env bash
# Shows that the build enforces the layers of ARCHITECTURE.md: tests/layering's control target
# (a file where a module stands, including what a module may) builds, and each target that breaks
# one rule (a module including a CPU kernel header, a module depending on the CPU backend, the core
# including a module, a formula or the tensor including the backend interface) fails to build for that reason;
# then that each test includes only headers of the layers its folder's BUILD names (tools/check-test-layers.py).
# Extra arguments go to `bazel build`.
set -uo pipefail
cd "$(dirname "$0")/.."

status=0
log=$(mktemp)
# A module that lists //nn/cpu among its deps, in a package that lives while this runs.
depending=tests/layering/depending-on-cpu-$$
trap 'rm -f "$log"; rm -rf "$depending"' EXIT
mkdir -p "$depending"
cat >"$depending/BUILD" <<'BUILD'
cc_library(
    name = "module_depending_on_cpu",
    srcs = ["//tests/layering:ModuleIncludingCpu.cpp"],
    deps = [
        "//nn/cpu",
        "//nn/modules",
    ],
)
BUILD

if bazel build "$@" //tests/layering:module_control >"$log" 2>&1; then
  echo "layers: //tests/layering:module_control builds"
else
  cat "$log"
  echo "layers: the control target does not build: the checks below would prove nothing"
  exit 1
fi

# TARGET, then what its failure must say
expect_failure() {
  local target=$1 reason=$2
  shift 2
  if bazel build "$@" "$target" >"$log" 2>&1; then
    echo "layers: $target built, but it breaks the layering"
    status=1
  elif grep -Eq "$reason" "$log"; then
    echo "layers: $target fails to build, as it must: $(grep -Eo "$reason" "$log" | head -n 1)"
  else
    cat "$log"
    echo "layers: $target failed for another reason than /$reason/"
    status=1
  fi
}

# A header outside the target's inputs: no such file in the sandbox, or, without one, Bazel's
# check of the included files.
missing() { echo "$1: No such file or directory|undeclared inclusion.*"; }
expect_failure //tests/layering:module_including_cpu "$(missing nn/cpu/Blas.h)" "$@"
expect_failure "//$depending:module_depending_on_cpu" "target '//nn/cpu:cpu' is not visible" "$@"
expect_failure //tests/layering:core_including_module "$(missing nn/modules/Linear.h)" "$@"
expect_failure //tests/layering:math_including_backend "$(missing nn/backend/TensorKernels.h)" "$@"
expect_failure //tests/layering:tensor_including_backend "$(missing nn/backend/Backend.h)" "$@"
# The tests: each includes only what the layers its BUILD names reach, which the build cannot
# check (//tests/support links the whole library).
python3 tools/check-test-layers.py || status=1
exit "$status"
