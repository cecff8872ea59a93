#!/usr/bin/env bash
# Copies a built library into PREFIX (what tools/install.sh does after building it, and what
# tools/install_test.sh checks): LIB as PREFIX/lib/libnn.so, the public headers of nn/ and
# cunn/ (run from the repository root, or a tree of the same layout) under PREFIX/include,
# PREFIX/lib/pkgconfig/nn.pc, and a CMake package (find_package(nn): the imported target nn::nn)
# under PREFIX/lib/cmake/nn. Files are copied whole and replaced atomically (install(1)).
# Usage: tools/install-files.sh PREFIX LIB
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: tools/install-files.sh PREFIX LIB" >&2; exit 2; }
prefix=$1
lib=$2
[ -f "$lib" ] || { echo "tools/install-files.sh: no library at $lib" >&2; exit 1; }
case "$prefix" in /*) ;; *) prefix=$PWD/$prefix ;; esac

install -D -m 0755 "$lib" "$prefix/lib/libnn.so"
headers=0
while IFS= read -r header; do
  install -D -m 0644 "$header" "$prefix/include/$header"
  headers=$((headers + 1))
done < <(find -L nn cunn -maxdepth 2 -name '*.h' ! -path 'cunn/cuda/*' | sort)
[ "$headers" -gt 0 ] || { echo "tools/install-files.sh: no headers under nn/ and cunn/ in $PWD" >&2; exit 1; }

pc=$(mktemp)
cat >"$pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: nn
Description: Torch7's nn and cunn in C++: modules, criterions, optimizers, DataParallelTable
Version: 0.1.0
Cflags: -std=c++17 -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lnn
Libs.private: -lopenblas -lz -lpthread
PC
install -D -m 0644 "$pc" "$prefix/lib/pkgconfig/nn.pc"

# The CMake package finds its prefix from where it lies, so that the tree can move.
cat >"$pc" <<'CMAKE'
# find_package(nn) defines nn::nn: the shared library, its headers and C++17.
get_filename_component(NN_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET nn::nn)
  add_library(nn::nn SHARED IMPORTED)
  set_target_properties(nn::nn PROPERTIES
    IMPORTED_LOCATION "${NN_PREFIX}/lib/libnn.so"
    INTERFACE_INCLUDE_DIRECTORIES "${NN_PREFIX}/include"
    INTERFACE_COMPILE_FEATURES cxx_std_17)
endif()
CMAKE
install -D -m 0644 "$pc" "$prefix/lib/cmake/nn/nnConfig.cmake"
cat >"$pc" <<'CMAKE'
# find_package(nn VERSION): 0.1.0 serves requests for 0.1.0 and below.
set(PACKAGE_VERSION "0.1.0")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
CMAKE
install -D -m 0644 "$pc" "$prefix/lib/cmake/nn/nnConfigVersion.cmake"
rm -f "$pc"
echo "installed libnn.so, $headers headers, nn.pc and the CMake package nn under $prefix" >&2
