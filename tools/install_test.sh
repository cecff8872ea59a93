#!/usr/bin/env bash
# Installs the built library into a scratch prefix (tools/install-files.sh, as tools/install.sh
# does) and builds a program against the installed copy as a user without Bazel would, with
# plain g++ and pkg-config, then with CMake's find_package, and runs it: it trains on two CPU
# devices and prints "ok". Two test cases; the CMake one is skipped where cmake is missing.
# Prints the "nn-test-cases:" line that tools/test-summary.sh adds up.
set -uo pipefail
passed=0
fail() {
  echo "install_test: $*" >&2
  echo "nn-test-cases: $passed passed, $((2 - passed)) failed, 0 skipped"
  exit 1
}
prefix=${TEST_TMPDIR:-$(mktemp -d)}/prefix
tools/install-files.sh "$prefix" libnn.so || fail "tools/install-files.sh failed"
[ -f "$prefix/include/cunn/cunn.h" ] && [ -f "$prefix/include/nn/math/BatchNorm.h" ] ||
  fail "headers missing under $prefix/include"
[ ! -e "$prefix/include/cunn/cuda" ] || fail "the CUDA backend's headers were installed"
flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs nn) || fail "pkg-config does not find nn"
program=${TEST_TMPDIR:-$prefix}/program
g++ -O1 tools/user_program.cpp $flags -o "$program" || fail "g++ could not build against the installed library"
output=$("$program") || fail "the program failed: $output"
echo "$output"
grep -qx ok <<<"$output" || fail "the program did not print ok"
# The library the program loads (awk reads all of ldd's output: grep -q would stop early, and
# ldd, killed by SIGPIPE, fail the pipeline), through any symbolic links in the paths.
loaded=$(ldd "$program" | awk '$1 == "libnn.so" {print $3}')
[ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f "$prefix/lib/libnn.so")" ] ||
  fail "the program loads ${loaded:-no libnn.so}, not $prefix/lib/libnn.so"
passed=1

# The same program from CMake: find_package(nn) through CMAKE_PREFIX_PATH, target nn::nn.
if ! command -v cmake >/dev/null; then
  echo "install_test: cmake not found: the CMake package is not tried (skipped)" >&2
  echo "nn-test-cases: 1 passed, 0 failed, 1 skipped"
  exit 0
fi
project=${TEST_TMPDIR:-$prefix}/cmake-project
mkdir -p "$project"
cp tools/user_program.cpp "$project/program.cpp"
cat >"$project/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.13)
project(uses_nn CXX)
find_package(nn 0.1 REQUIRED)
add_executable(program program.cpp)
target_link_libraries(program nn::nn)
CMAKE
cmake -S "$project" -B "$project/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null ||
  fail "cmake could not configure a project that uses find_package(nn)"
cmake --build "$project/build" >/dev/null || fail "cmake could not build against the installed library"
output=$("$project/build/program") || fail "the CMake-built program failed: $output"
grep -qx ok <<<"$output" || fail "the CMake-built program did not print ok"
echo "nn-test-cases: 2 passed, 0 failed, 0 skipped"
