#!/usr/bin/env bash
# Runs an aarch64 program of the --config=aarch64 build (a test under `bazel test`, a binary
# under `bazel run`) in qemu-aarch64, with its arguments, from the current folder.
#
# The program loads the arm64 libraries of Debian's multiarch packages (/lib/ld-linux-aarch64.so.1
# and /usr/lib/aarch64-linux-gnu: libc6, libstdc++6, OpenBLAS, zlib), qemu's default root being
# /. Not `-L /usr/aarch64-linux-gnu`: that folder's loader is the cross compiler's glibc build,
# which with the multiarch libc.so.6 hangs before main in any program that starts a thread.
#
# The CPU emulated is a Neoverse N1 (AWS Graviton2, Ampere Altra; QEMU_CPU chooses another), for
# which OpenBLAS picks the kernels it runs on such a server; on qemu's default CPU it would fall
# back to its generic ARMv8 ones. NN_TEST_EMULATOR tells the tests (tests/support/main.cpp).
#
# A test that starts a program of its own (examples/lenet) would have the kernel run an aarch64
# file, which it cannot do without binfmt_misc. Where qemu is not registered there, the program
# runs from a copy of the current folder's tree of links in which each other aarch64 executable
# is a script that starts it in qemu-aarch64 (the same process: a signal sent to it reaches the
# program).
set -euo pipefail
unset QEMU_LD_PREFIX
export QEMU_CPU=${QEMU_CPU:-neoverse-n1}
export NN_TEST_EMULATOR="qemu-aarch64 -cpu $QEMU_CPU"
program=$(readlink -f "$1")
shift

# Whether a file is an aarch64 ELF executable: e_machine (bytes 18-19) is 183.
is_aarch64() {
  [ -f "$1" ] && [ -x "$1" ] && [ "$(head -c 4 "$1")" = $'\x7fELF' ] &&
    [ "$(od -An -tu2 -j18 -N2 "$1" | tr -d ' ')" = 183 ]
}

if ! grep -qs '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64; then
  others=()
  while IFS= read -r -d '' f; do
    [ "$(readlink -f "$f")" != "$program" ] && is_aarch64 "$f" && others+=("$f")
  done < <(find -L . -type f -perm -u+x -print0 2>/dev/null)
  if [ ${#others[@]} -gt 0 ]; then
    shadow=$(mktemp -d "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/qemu-tree.XXXXXX")
    cp -rs "$PWD/." "$shadow/"
    for f in "${others[@]}"; do
      rm "$shadow/$f"
      printf '#!/bin/sh\nexec qemu-aarch64 %q "$@"\n' "$(readlink -f "$f")" >"$shadow/$f"
      chmod +x "$shadow/$f"
    done
    cd "$shadow"
  fi
fi
exec qemu-aarch64 "$program" "$@"
