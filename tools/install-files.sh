#!/usr/bin/env bash
# Copies a built library into PREFIX (what tools/install.sh does after building it, and what
# tools/install_test.sh checks): LIB as PREFIX/lib/libnn.so, the public headers of nn/ and
# cunn/ (run from the repository root, or a tree of the same layout) under PREFIX/include,
# PREFIX/lib/pkgconfig/nn.pc, and a CMake package (find_package(nn): the imported target nn::nn)
# under PREFIX/lib/cmake/nn. Files are copied whole and replaced atomically (install(1)).
# MPI_SUMMARY is the build's @mpi//:summary.txt: where it says "with MPI: MPICXX, ...", LIB holds
# nn/distributed (//:libnn.so), whose public headers are installed too, and MPI's flags (from
# MPICXX --showme) go into nn.pc and the CMake package; otherwise, or without it, nn/distributed
# is neither in LIB nor installed.
# Usage: tools/install-files.sh PREFIX LIB [MPI_SUMMARY]
set -euo pipefail
[ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: tools/install-files.sh PREFIX LIB [MPI_SUMMARY]" >&2; exit 2; }
prefix=$1
lib=$2
summary=${3:-}
[ -f "$lib" ] || { echo "tools/install-files.sh: no library at $lib" >&2; exit 1; }
case "$prefix" in /*) ;; *) prefix=$PWD/$prefix ;; esac

# MPI as the build found it, and its flags as Open MPI's wrapper gives them (the C API alone,
# as tools/bazel/mpi_configure.bzl links it).
mpicxx=""
if [ -n "$summary" ]; then
  [ -f "$summary" ] || { echo "tools/install-files.sh: no MPI summary at $summary" >&2; exit 1; }
  line=$(head -n 1 "$summary")
  case "$line" in "with MPI: "*) mpicxx=${line#with MPI: } ;; esac
  mpicxx=${mpicxx%%,*}
fi
mpi_incdirs=() mpi_libs=()
if [ -n "$mpicxx" ]; then
  read -r -a mpi_incdirs < <("$mpicxx" --showme:incdirs) || true
  read -r -a libdirs < <("$mpicxx" --showme:libdirs) || true
  read -r -a libs < <("$mpicxx" --showme:libs) || true
  for d in "${libdirs[@]}"; do mpi_libs+=("-L$d" "-Wl,-rpath,$d"); done
  for l in "${libs[@]}"; do [ "$l" = mpi_cxx ] || mpi_libs+=("-l$l"); done
fi

install -D -m 0755 "$lib" "$prefix/lib/libnn.so"
headers=0
# nn/distributed's public headers are the hdrs of its BUILD (NcclGroup.h is its own).
distributed=(nn/distributed/DistributedDataParallelTable.h nn/distributed/Launch.h
  nn/distributed/ProcessGroup.h nn/distributed/MpiProcessGroup.h)
[ -n "$mpicxx" ] || distributed=()
while IFS= read -r header; do
  install -D -m 0644 "$header" "$prefix/include/$header"
  headers=$((headers + 1))
done < <({
  find -L nn cunn -maxdepth 2 -name '*.h' ! -path 'nn/cpu/*' ! -path 'nn/cuda/*' ! -path 'nn/distributed/*' \
    ! -path nn/onnx/Onnx.h ! -path nn/io/JsonChecks.h
  [ ${#distributed[@]} -eq 0 ] || printf '%s\n' "${distributed[@]}"
} | sort)
[ "$headers" -gt 0 ] || { echo "tools/install-files.sh: no headers under nn/ and cunn/ in $PWD" >&2; exit 1; }
mpi_cflags="" mpi_ldflags=""
[ -z "$mpicxx" ] || mpi_cflags="$(printf ' -I%s' "${mpi_incdirs[@]}") -DOMPI_SKIP_MPICXX"
[ -z "$mpicxx" ] || mpi_ldflags=$(printf ' %s' "${mpi_libs[@]}")

pc=$(mktemp)
cat >"$pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: nn
Description: Torch7's nn and cunn in C++: modules, criterions, optimizers, DataParallelTable
Version: 0.1.0
Cflags: -std=c++17 -I\${includedir}$mpi_cflags
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lnn$mpi_ldflags
Libs.private: -ldl -lz -lpng -ljpeg -lonnx -lonnx_proto -lprotobuf -lpthread
PC
install -D -m 0644 "$pc" "$prefix/lib/pkgconfig/nn.pc"

# The CMake package finds its prefix from where it lies, so that the tree can move.
{
  cat <<'CMAKE'
# find_package(nn) defines nn::nn: the shared library, its headers and C++17.
get_filename_component(NN_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET nn::nn)
  add_library(nn::nn SHARED IMPORTED)
  set_target_properties(nn::nn PROPERTIES
    IMPORTED_LOCATION "${NN_PREFIX}/lib/libnn.so"
    INTERFACE_INCLUDE_DIRECTORIES "${NN_PREFIX}/include"
    INTERFACE_COMPILE_FEATURES cxx_std_17)
CMAKE
  if [ -n "$mpicxx" ]; then
    echo "  # MPI, which nn/distributed was built with (MpiProcessGroup.h includes mpi.h)."
    printf '  set_property(TARGET nn::nn APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES%s)\n' "$(printf ' "%s"' "${mpi_incdirs[@]}")"
    echo "  set_property(TARGET nn::nn APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS OMPI_SKIP_MPICXX)"
    printf '  set_property(TARGET nn::nn APPEND PROPERTY INTERFACE_LINK_LIBRARIES%s)\n' "$(printf ' "%s"' "${mpi_libs[@]}")"
  fi
  echo "endif()"
} >"$pc"
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
with="without nn/distributed: the build found no MPI"
[ -z "$mpicxx" ] || with="with nn/distributed and MPI from $mpicxx"
echo "installed libnn.so, $headers headers, nn.pc and the CMake package nn under $prefix ($with)" >&2
