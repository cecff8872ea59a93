#!/usr/bin/env bash
# Installs the built library into a scratch prefix (tools/install-files.sh, as tools/install.sh
# does) and builds a program against the installed copy with plain g++ and pkg-config, as a user
# without Bazel would, then runs it: it trains on two CPU devices and prints "ok". Prints the
# "nn-test-cases:" line that tools/test-summary.sh adds up.
set -uo pipefail
fail() {
  echo "install_test: $*" >&2
  echo "nn-test-cases: 0 passed, 1 failed, 0 skipped"
  exit 1
}
prefix=${TEST_TMPDIR:-$(mktemp -d)}/prefix
tools/install-files.sh "$prefix" libnn.so || fail "tools/install-files.sh failed"
[ -f "$prefix/include/cunn/cunn.h" ] && [ -f "$prefix/include/nn/math/BatchNorm.h" ] ||
  fail "headers missing under $prefix/include"
[ ! -e "$prefix/include/cunn/cuda" ] || fail "the CUDA backend's headers were installed"
flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs nn) || fail "pkg-config does not find nn"
program=${TEST_TMPDIR:-$prefix}/program
g++ -O1 tools/install_test_program.cpp $flags -o "$program" || fail "g++ could not build against the installed library"
output=$("$program") || fail "the program failed: $output"
echo "$output"
grep -qx ok <<<"$output" || fail "the program did not print ok"
# The library the program loads (awk reads all of ldd's output: grep -q would stop early, and
# ldd, killed by SIGPIPE, fail the pipeline), through any symbolic links in the paths.
loaded=$(ldd "$program" | awk '$1 == "libnn.so" {print $3}')
[ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f "$prefix/lib/libnn.so")" ] ||
  fail "the program loads ${loaded:-no libnn.so}, not $prefix/lib/libnn.so"
echo "nn-test-cases: 1 passed, 0 failed, 0 skipped"
