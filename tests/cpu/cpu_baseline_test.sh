#!/usr/bin/env bash
# On an x86-64 CPU below the build's baseline (no AVX2 or FMA: tools/bazel/copts.bzl builds for
# x86-64-v3), a program built with the library stops at load with the library's message and exit
# status 70 (nn/cpu/Isa.cpp), not with an illegal instruction: a test binary run under QEMU's
# emulation of such a CPU (Nehalem), and of one with them (Haswell), where it runs.
# Skipped where qemu-x86_64 (Debian's qemu-user) is missing, where this is not an x86-64 machine,
# and for a build under a sanitizer (qemu-user cannot map AddressSanitizer's or ThreadSanitizer's
# shadow memory: the emulated program is killed before main).
# Usage: tests/cpu/cpu_baseline_test.sh TEST_BINARY
set -uo pipefail
binary=$1

if [ "$(uname -m)" != x86_64 ] || ! command -v qemu-x86_64 >/dev/null; then
  echo "skipped: needs qemu-x86_64 (Debian's qemu-user) on an x86-64 machine"
  echo "nn-test-cases: 0 passed, 0 failed, 2 skipped"
  exit 0
fi
if readelf -d "$binary" 2>/dev/null | grep -qE 'NEEDED.*lib(a|t)san'; then
  echo "skipped: $binary is built with a sanitizer, which qemu-user cannot run"
  echo "nn-test-cases: 0 passed, 0 failed, 2 skipped"
  exit 0
fi

passed=0 failed=0
check() {  # NAME EXPECTED_STATUS EXPECTED_TEXT COMMAND...
  local name=$1 expected=$2 text=$3 output status
  shift 3
  output=$("$@" 2>&1)
  status=$?
  if [ "$status" -eq "$expected" ] && grep -qF -- "$text" <<<"$output"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAILED: $name: expected status $expected and '$text', got status $status:"
    echo "$output" | tail -n 20
  fi
}

check "a CPU without AVX2 gets the message" 70 "nn: this CPU lacks AVX2 or FMA" \
  qemu-x86_64 -cpu Nehalem "$binary" "setIsa lowers the level*"
check "a CPU with AVX2 and FMA runs the tests" 0 "nn-test-cases: 1 passed, 0 failed" \
  qemu-x86_64 -cpu Haswell "$binary" "setIsa lowers the level*"

echo "nn-test-cases: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
