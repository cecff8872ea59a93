#!/usr/bin/env bash
# Packs the CUDA build's test binaries and examples into DIR, with what a GPU node that has the
# NVIDIA driver, the CUDA toolkit and Python (perhaps PyTorch's wheels) but no Bazel, no package
# archive and no network lacks: OpenBLAS, zlib and Open MPI's libraries, the test data, Fashion-MNIST.
# There `DIR/run.sh OUT` runs them (tools/gpu-bundle/run.sh says how) and writes its summary to OUT.
# Builds here with the CUDA toolkit; a CPU build is refused. DIR stays under 64 MiB: the binaries
# and libraries are gzipped (the runner unpacks them) and the training set is cut to its first
# 20,000 images.
# DIR is taken from the caller's folder; an earlier bundle there is replaced, anything else that
# is not an empty folder is refused before anything is built or removed.
# Usage: tools/gpu-bundle.sh DIR
set -euo pipefail
dir=${1:?"usage: tools/gpu-bundle.sh DIR"}
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
marker=.nn-gpu-bundle  # written into every bundle: what may be replaced
replaceable() {  # DIR: nothing there, an empty folder, or a bundle this script made
  if [ ! -e "$1" ] && [ ! -L "$1" ]; then return 0; fi
  [ -d "$1" ] && [ ! -L "$1" ] && { [ -f "$1/$marker" ] || [ -z "$(ls -A "$1")" ]; }
}
if ! replaceable "$dir"; then
  echo "tools/gpu-bundle.sh: $dir exists and is not a bundle this script made (no $marker in it); give a new or empty folder" >&2
  exit 1
fi
cd "$(dirname "$0")/.."

tools/install-deps.sh dataset-fashion-mnist
kind=$(tools/build-kind.sh)
case $kind in
  "CUDA build"*) ;;
  *) echo "tools/gpu-bundle.sh: needs the CUDA build (a CUDA toolkit), got: $kind" >&2; exit 1 ;;
esac
bazel build //tests/... //examples/...
bin=$(bazel info bazel-bin 2>/dev/null)

# root/ is laid out as a test's runfiles tree, where the tests look for their files and the
# examples they run; the binaries find the project's libraries through their RUNPATH
# ($ORIGIN/../_solib_k8).
rm -rf "$dir"
mkdir -p "$dir"
touch "$dir/$marker"
mkdir -p "$dir/root/tests" "$dir/root/examples" "$dir/root/external/mpi" "$dir/root/_solib_k8" "$dir/lib" "$dir/data"
is_elf() { [ "$(head -c 4 "$1" | tr -d '\0')" = $'\x7fELF' ]; }
# The test binaries side by side in root/tests (their names are unique across tests/'s folders),
# where the runner finds them.
for f in "$bin"/tests/*/*_test "$bin"/tests/distributed/distributed_ranks; do
  if [ -f "$f" ] && is_elf "$f"; then cp -L "$f" "$dir/root/tests/"; fi
done
for f in lenet resnet custom_module; do cp -L "$bin/examples/$f" "$dir/root/examples/"; done
cp -L "$bin"/_solib_k8/*.so "$dir/root/_solib_k8/"
cp -r tests/fixtures "$dir/root/tests/"
# The scripts through which tests run ONNX Runtime and TensorBoard's reader (where the node's
# python3 has them: run.sh checks).
mkdir -p "$dir/root/tests/reference"
cp tests/reference/onnx_runtime.py tests/reference/tensorboard_scalars.py "$dir/root/tests/reference/"
mkdir -p "$dir/root/tools"
cp tools/onnx-accuracy.py "$dir/root/tools/"
mkdir -p "$dir/root/tests/fuzz"
cp -r tests/fuzz/corpus tests/fuzz/regressions "$dir/root/tests/fuzz/"
cp "$(bazel info output_base 2>/dev/null)/external/mpi/summary.txt" "$dir/root/external/mpi/"
# The tests Bazel gives the long time limit (size "large" in tests/*/BUILD), for the runner.
bazel query 'attr(size, large, tests(//tests/...))' 2>/dev/null | sed 's|^//tests/[a-z_]*:||' >"$dir/large-tests.txt"

# The shared libraries the binaries need that are neither the C and C++ runtimes (every
# node has them) nor CUDA's (the node's toolkit, or PyTorch's wheels, has those). OpenBLAS is
# loaded by the library itself (nn/cpu/Blas.cpp), so no binary lists it: it and what it needs
# are added by name.
# (ldd's status is not 0 where one of the files is no dynamic executable: its lines count.)
openblas=$(readlink -f "$(/sbin/ldconfig -p | awk '$1 == "libopenblas.so.0" && $NF ~ /^\// {print $NF; exit}')")
[ -f "$openblas" ] || { echo "tools/gpu-bundle.sh: no libopenblas.so.0 found (ldconfig -p)" >&2; exit 1; }
needed=$(ldd "$dir"/root/tests/* "$dir"/root/examples/* "$dir"/root/_solib_k8/*.so "$openblas" 2>/dev/null || true)
needed+=$'\n'"libopenblas.so.0 => $openblas (0x0)"
echo "$needed" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r name path; do
    case $name in
      libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | libstdc++.so* | libgcc_s.so* | ld-linux*) ;;
      *_S*.so) ;;  # the project's own, in root/_solib_k8
      libcuda.so* | libcudart.so* | libcublas*.so* | libcudnn*.so* | libnccl.so*) ;;
      *) gzip -9 -c "$path" >"$dir/lib/$name.gz" ;;
    esac
  done

# Fashion-MNIST: the test set whole, the training set's first 20,000 images and labels (IDX
# headers rewritten with that count).
data=/usr/share/datasets/fashion-mnist
cp "$data"/t10k-*.gz "$dir/data/"
python3 - "$data" "$dir/data" 20000 <<'EOF'
import gzip, struct, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for name, item in (("train-images-idx3-ubyte", 28 * 28), ("train-labels-idx1-ubyte", 1)):
    raw = gzip.open(f"{src}/{name}.gz").read()
    dims = raw[3]
    header = bytearray(raw[:4 + 4 * dims])
    struct.pack_into(">I", header, 4, n)
    with gzip.open(f"{dst}/{name}.gz", "wb", compresslevel=9) as out:
        out.write(bytes(header) + raw[4 + 4 * dims:4 + 4 * dims + n * item])
EOF

tar -C "$dir" -czf "$dir/root.tar.gz" root
rm -rf "$dir/root"
cp tools/gpu-bundle/run.sh "$dir/run.sh"
chmod +x "$dir/run.sh"
git rev-parse HEAD >"$dir/commit.txt" 2>/dev/null || true
echo "tools/gpu-bundle.sh: $dir, $(du -sm "$dir" | cut -f1) MiB; run it with: $dir/run.sh OUT"
