#!/usr/bin/env bash
# Installs the library for programs built without Bazel (Make, CMake, plain g++):
# PREFIX/lib/libnn.so (the CPU backend, the ONNX exporter, the CUDA backend where the build finds
# a CUDA toolkit, and nn/distributed where it finds MPI), the public headers under PREFIX/include
# (#include "cunn/cunn.h"; nn/distributed's only with MPI) and a pkg-config file,
# PREFIX/lib/pkgconfig/nn.pc (with MPI's flags where it is used). Then, for example:
#   export PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
#   g++ -O2 -march=native my.cpp $(pkg-config --cflags --libs nn) -o my
# and in CMake: pkg_check_modules(NN REQUIRED IMPORTED_TARGET nn), linking PkgConfig::NN.
# Usage: tools/install.sh [--prefix PREFIX]   (default /usr/local)
set -euo pipefail

prefix=/usr/local
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || { echo "tools/install.sh: --prefix needs a folder" >&2; exit 2; }; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    *) echo "usage: tools/install.sh [--prefix PREFIX]" >&2; exit 2 ;;
  esac
done
case "$prefix" in /*) ;; *) prefix=$PWD/$prefix ;; esac  # relative to where it was called from
cd "$(dirname "$0")/.."

tools/install-deps.sh
bazel build //:libnn.so @mpi//:summary.txt >&2
tools/install-files.sh "$prefix" bazel-bin/libnn.so "$(bazel info output_base 2>/dev/null)/external/mpi/summary.txt"
