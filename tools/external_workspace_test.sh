#!/usr/bin/env bash
# Builds and runs tests/external_workspace with a Bazel of its own, as a user would: a workspace
# that names this repository @nn and calls nn_deps(), with no .bazelrc and no option that
# changes the build. Its program trains on cpu:0,cpu:1 and prints "ok"; the library must be
# compiled there with the project's flags although the build is Bazel's default mode. Prints
# the "nn-test-cases:" line that tools/test-summary.sh adds up.
#
# The nested Bazel keeps its output under ~/.cache/nn-external-workspace (XDG_CACHE_HOME if
# set), so only its first run compiles the whole library; its server stops when the test ends.
set -uo pipefail
fail() {
  echo "external_workspace_test: $*" >&2
  echo "nn-test-cases: 0 passed, 1 failed, 0 skipped"
  exit 1
}

# This repository's own folder, through the links of the runfiles tree: the nested workspace
# refers to it as ../.. and is not in the runfiles (.bazelignore keeps it out of this workspace).
repo=$(dirname "$(dirname "$(readlink -f "$0")")")
workspace=$repo/tests/external_workspace
[ -f "$workspace/WORKSPACE" ] || fail "no workspace at $workspace"
# A test's HOME is not the user's: the cache must outlive the test.
home=$(getent passwd "$(id -u)" | cut -d: -f6)
[ -n "$home" ] || fail "no home folder for user $(id -u)"
cache=${XDG_CACHE_HOME:-$home/.cache}/nn-external-workspace

# A user's environment, not this test's (TEST_TMPDIR, for one, would move Bazel's output root).
nested_bazel() {
  (cd "$workspace" && env -i PATH="$PATH" HOME="$home" USER="$(id -un)" \
    bazel --output_user_root="$cache" --max_idle_secs=300 "$@")
}
trap 'nested_bazel shutdown' EXIT

# --symlink_prefix=/: no bazel-* links in the source folder;
# --nosandbox_debug undoes Debian's /etc/bazel/bazelrc, which keeps every action's sandbox and
# logs pages of its setup.
start=$SECONDS
output=$(nested_bazel run --nosandbox_debug --symlink_prefix=/ //:main) ||
  fail "bazel run //:main failed in $workspace: $output"
echo "$output"
echo "built and ran in $((SECONDS - start)) s"
grep -qx ok <<<"$output" || fail "the program did not print ok"

# Every C++ file of the library compiled with the project's language standard, optimisation and
# instruction set (tools/bazel/copts.bzl), in the default mode; nn/distributed, which the
# program does not use, is analysed too (its @mpi comes from nn_deps()).
library='@nn//nn + @nn//cunn + @nn//nn/distributed'
actions=$(nested_bazel aquery --nosandbox_debug --output=text "mnemonic(\"CppCompile\", $library)") ||
  fail "bazel aquery failed in $workspace"
missing=$(tr -d "'" <<<"$actions" | awk '
  /^action / { if (name != "" && !(std && opt && arch)) print name; name = $0; std = opt = arch = 0 }
  /^    -std=c\+\+17 / { std = 1 }
  /^    -O2 / { opt = 1 }
  /^    -march=x86-64-v3 / { arch = 1 }
  END { if (name != "" && !(std && opt && arch)) print name }')
count=$(grep -c '^action ' <<<"$actions")
[ "$count" -gt 0 ] || fail "bazel aquery found no compile action of @nn//nn"
[ -z "$missing" ] || fail "compiled without -std=c++17 -O2 -march=x86-64-v3: $missing"
echo "$count files of the library compiled with -std=c++17 -O2 -march=x86-64-v3"
echo "nn-test-cases: 1 passed, 0 failed, 0 skipped"
