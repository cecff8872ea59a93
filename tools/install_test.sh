#!/usr/bin/env bash
# Installs the built library into a scratch prefix (tools/install-files.sh, as tools/install.sh
# does) and builds a program against the installed copy as a user without Bazel would, with
# plain g++ and pkg-config, then with CMake's find_package, and runs it: it trains on two CPU
# devices and prints "ok". Then nn/distributed: where the build found MPI, a program that
# makes a DistributedDataParallelTable builds against the installed copy with pkg-config and
# runs as one process; without MPI, none of its headers are installed. Then the ONNX exporter: a
# program built against the installed copy exports a small network and checks the file. Four
# test cases; the CMake one is skipped where cmake is missing.
# Prints the "nn-test-cases:" line that tools/test-summary.sh adds up.
set -uo pipefail
cases=4
passed=0 skipped=0
fail() {
  echo "install_test: $*" >&2
  echo "nn-test-cases: $passed passed, $((cases - passed - skipped)) failed, $skipped skipped"
  exit 1
}
summary=external/mpi/summary.txt
prefix=${TEST_TMPDIR:-$(mktemp -d)}/prefix
tools/install-files.sh "$prefix" libnn.so "$summary" || fail "tools/install-files.sh failed"
[ -f "$prefix/include/cunn/cunn.h" ] && [ -f "$prefix/include/nn/math/BatchNorm.h" ] ||
  fail "headers missing under $prefix/include"
[ ! -e "$prefix/include/nn/cuda" ] || fail "the CUDA backend's headers were installed"
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

# nn/distributed: in the library, with its headers and MPI's flags, exactly where the build
# found MPI (the library's headers once promised nn::ProcessGroup::world(), which did not link).
if grep -q '^with MPI' "$summary"; then
  [ -f "$prefix/include/nn/distributed/DistributedDataParallelTable.h" ] &&
    [ -f "$prefix/include/nn/distributed/MpiProcessGroup.h" ] || fail "nn/distributed's headers missing"
  [ ! -e "$prefix/include/nn/distributed/NcclGroup.h" ] || fail "nn/distributed's own NcclGroup.h was installed"
  cat >"${TEST_TMPDIR:-$prefix}/distributed.cpp" <<'CPP'
// One process: a DistributedDataParallelTable over MPI_COMM_WORLD of size 1, a step of SGD.
#include <cstdio>
#include <memory>

#include "cunn/cunn.h"
#include "nn/distributed/DistributedDataParallelTable.h"
#include "nn/distributed/MpiProcessGroup.h"

int main() {
  auto group = nn::ProcessGroup::world();
  auto model = std::make_shared<nn::DistributedDataParallelTable>(std::make_shared<nn::Linear>(3, 2), group);
  nn::SGD sgd(model->getParameters(), nn::SgdOptions());
  const nn::Tensor x = nn::Tensor::full({4, 3}, 1.f);
  model->zeroGradParameters();
  model->backward(x, model->forward(x));
  sgd.step();
  std::printf("rank %d of %d\nok\n", group->rank(), group->size());
  return 0;
}
CPP
  distributed=${TEST_TMPDIR:-$prefix}/distributed
  g++ -O1 "${TEST_TMPDIR:-$prefix}/distributed.cpp" $flags -o "$distributed" ||
    fail "g++ could not build a program of nn/distributed against the installed library"
  output=$(HOME=${TEST_TMPDIR:-$prefix} TMPDIR=${TEST_TMPDIR:-/tmp} "$distributed" 2>&1) ||
    fail "the nn/distributed program failed: $output"
  echo "$output"
  grep -qx ok <<<"$output" || fail "the nn/distributed program did not print ok"
else
  [ ! -e "$prefix/include/nn/distributed" ] || fail "nn/distributed's headers were installed without MPI"
  ! nm -DC --defined-only "$prefix/lib/libnn.so" | grep -q 'nn::ProcessGroup::world()' ||
    fail "libnn.so holds nn/distributed in a build without MPI"
fi
passed=2

# The ONNX exporter: in the library, its public headers installed and its private one not (the
# library's headers once promised nn::exportOnnx, which did not link). The modules' exports
# register themselves as the library loads: a network of three kinds of module exports whole.
[ -f "$prefix/include/nn/onnx/Export.h" ] && [ -f "$prefix/include/nn/onnx/Exporter.h" ] ||
  fail "the ONNX exporter's headers missing"
[ ! -e "$prefix/include/nn/onnx/Onnx.h" ] || fail "the ONNX exporter's own Onnx.h was installed"
cat >"${TEST_TMPDIR:-$prefix}/onnx.cpp" <<'CPP'
// A network exported to an ONNX file and the file checked by ONNX's checker.
#include <cstdio>
#include <memory>
#include <string>

#include "cunn/cunn.h"
#include "nn/onnx/Export.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  nn::Sequential net({std::make_shared<nn::Linear>(3, 4), std::make_shared<nn::ReLU>(),
                      std::make_shared<nn::LogSoftMax>()});
  nn::exportOnnx(net, nn::Tensor::full({2, 3}, 1.f), argv[1]);
  nn::checkOnnxFile(argv[1]);
  std::printf("ok\n");
  return 0;
}
CPP
onnx=${TEST_TMPDIR:-$prefix}/onnx
g++ -O1 "${TEST_TMPDIR:-$prefix}/onnx.cpp" $flags -o "$onnx" ||
  fail "g++ could not build a program of the ONNX exporter against the installed library"
output=$("$onnx" "${TEST_TMPDIR:-$prefix}/net.onnx" 2>&1) || fail "the ONNX program failed: $output"
echo "$output"
grep -qx ok <<<"$output" || fail "the ONNX program did not print ok"
[ -s "${TEST_TMPDIR:-$prefix}/net.onnx" ] || fail "the ONNX program wrote no file"
passed=3

# The same program from CMake: find_package(nn) through CMAKE_PREFIX_PATH, target nn::nn.
if ! command -v cmake >/dev/null; then
  echo "install_test: cmake not found: the CMake package is not tried (skipped)" >&2
  echo "nn-test-cases: 3 passed, 0 failed, 1 skipped"
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
echo "nn-test-cases: 4 passed, 0 failed, 0 skipped"
