#!/usr/bin/env bash
# The aarch64 build, tested on this x86-64 machine: installs what is missing (Debian's arm64
# architecture, g++-aarch64-linux-gnu, qemu-user, and the arm64 OpenBLAS, zlib and C++ runtime),
# cross-compiles the Catch2 test binaries with --config=aarch64 (.bazelrc), runs them in
# qemu-aarch64 (tools/bazel/aarch64/qemu.sh) and ends, as tools/test.sh does, with a line counting
# skipped test cases, then, last, "N passed, N failed".
# Usage: tools/test-aarch64.sh [--subset] [bazel test options]
#   --subset: the tests below (10 minutes from a cold build on 2 cores, the tests 30 s of it);
#   without it, every Catch2 test (about an hour with the build). The shell tests (MPI under
#   mpirun, the installation, another workspace, the summary script) run host programs and
#   stay out.
set -uo pipefail
cd "$(dirname "$0")/.."

# Tensors and BLAS (OpenBLAS's ARM kernels), Linear, the unfolded and Winograd convolutions (the
# routes aarch64 takes: the direct and shallow ones are AVX-512's), batch normalisation, the
# optimizers, gzip-compressed IDX files (zlib), DataParallelTable on two CPU devices.
SUBSET=(
  tensor_test
  linear_test
  convolution_test
  convolution_shallow_test
  batchnorm_test
  optimizer_test
  idx_test
  data_parallel_test
)

scope='kind(cc_test, //tests/...)'
if [ "${1:-}" = --subset ]; then
  shift
  names=$(IFS='|'; echo "${SUBSET[*]}")
  scope="attr(name, '^($names)\$', kind(cc_test, //tests/...))"
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "Adding Debian's arm64 architecture (for its OpenBLAS, zlib, protobuf and C++ runtime)" >&2
  $sudo dpkg --add-architecture arm64 || exit 1
  $sudo apt-get update -qq || exit 1
fi
# libstdc++6:arm64: qemu.sh runs the tests on the multiarch libraries only (not the cross
# compiler's copies under /usr/aarch64-linux-gnu).
tools/install-deps.sh g++-aarch64-linux-gnu qemu-user libopenblas-dev:arm64 zlib1g-dev:arm64 libpng-dev:arm64 libjpeg62-turbo-dev:arm64 libprotobuf-dev:arm64 libstdc++6:arm64 || exit 1
# Debian 12's arm64 libonnx-dev cannot be installed beside the amd64 one (both packages of
# libonnxifi ship /usr/lib/libonnxifi.so): its libraries are unpacked into a folder of their own,
# which the cross build links against and the tests load from (rpath).
onnx=${XDG_CACHE_HOME:-$HOME/.cache}/nn-aarch64/onnx
onnxlib=$onnx/usr/lib/aarch64-linux-gnu
if [ ! -e "$onnxlib/libonnx.so" ]; then
  debs=$(mktemp -d)
  mkdir -p "$onnx"
  (cd "$debs" && apt-get download -qq libonnx1:arm64 libonnx-dev:arm64) || exit 1
  for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$onnx" || exit 1; done
  rm -rf "$debs"
fi
set -- --linkopt=-L"$onnxlib" --linkopt=-Wl,-rpath,"$onnxlib" "$@"

if ! targets=$(bazel cquery --noshow_progress --config=aarch64 "$scope" "$@" 2>&1); then
  echo "tools/test-aarch64.sh: bazel cquery failed:" >&2
  echo "$targets" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
targets=$(grep '^//' <<<"$targets" | sed 's/ .*//')
echo "aarch64 build (g++-aarch64-linux-gnu, -march=armv8-a), tests run in $(qemu-aarch64 --version | head -n 1)"
output=$(mktemp)
trap 'rm -f "$output"' EXIT
# shellcheck disable=SC2086 # one target a word
bazel test --config=aarch64 "$@" $targets 2>&1 | tee "$output"
tools/test-summary.sh "$output" --scope="$scope" --config=aarch64 "$@"
