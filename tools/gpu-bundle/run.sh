#!/usr/bin/env bash
# The runner of a bundle that tools/gpu-bundle.sh made: on a GPU node without Bazel, runs every
# test binary (their CUDA cases on the node's GPUs, the CPU cases as everywhere), several at a
# time, then trains LeNet for one epoch on cuda:0 and, where there are two GPUs, on cuda:0,cuda:1,
# and writes to OUT: summary.txt, each binary's output in logs/ and all of them in logs.tar.gz,
# and nvidia-smi's report.
#
# The summary says what ran where: the bundle's commit, the CPU, the GPUs and the driver, the
# CUDA runtime, cuBLAS, cuDNN and NCCL the binaries resolved (paths and versions; a library that
# resolves nowhere stops the run, named, before any test), then per binary "N passed, N failed,
# N skipped" or how it ended, with a failing binary's first failed assertions; the totals;
# LeNet's accuracy and images/s. A GPU that nvidia-smi lists but the tests cannot use (a driver
# older than the CUDA runtime, say) fails the run rather than skipping its cases.
#
# cuDNN and NCCL come from the CUDA toolkit ($CUDA_HOME, else /usr/local/cuda) or from PyTorch's
# nvidia-* wheels of the python3 on PATH. JOBS binaries run at once (half the cores, at most 8),
# the ones with the most CUDA work first; each has a time limit (TEST_LIMIT seconds, 60; twice
# that for the tests Bazel runs as large, listed in large-tests.txt), and none starts past
# TOTAL_LIMIT seconds (360) from the start, which leaves the trainings (45 s each at most) time
# within 8 minutes.
# MODE=sanitize runs the CUDA cases of the kernel and table tests under compute-sanitizer
# instead (memcheck, then racecheck and synccheck while SANITIZE_LIMIT seconds, 420, last).
# DEVICES=cpu:0 trains on that device instead (to try the bundle on a machine without a GPU).
# Exits non-zero where a test failed or LeNet did not train.
# Usage: run.sh OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?"usage: run.sh OUT"}
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
test_limit=${TEST_LIMIT:-60}
total_limit=${TOTAL_LIMIT:-360}
cores=$(nproc 2>/dev/null || echo 2)
jobs=${JOBS:-$((cores >= 16 ? 8 : (cores + 1) / 2))}
started=$SECONDS
summary=$out/summary.txt

lib=$(mktemp -d)
tmp=$(mktemp -d)
trap 'rm -rf "$lib" "$tmp"' EXIT
for f in "$here"/lib/*.gz; do [ -e "$f" ] && gunzip -c "$f" >"$lib/$(basename "$f" .gz)"; done
# The project's own libraries: the binaries' RPATH counts from tests/<folder>/, one folder deeper
# than root/tests, where the bundle keeps them side by side.
paths=$lib:$here/root/_solib_k8
cuda=${CUDA_HOME:-/usr/local/cuda}
[ -d "$cuda/lib64" ] && paths+=":$cuda/lib64"
if command -v python3 >/dev/null; then
  wheels=$(python3 - <<'EOF' 2>/dev/null
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
print(":".join(sorted({p for r in roots for p in glob.glob(os.path.join(r, "nvidia", "*", "lib"))})))
EOF
  )
  [ -n "$wheels" ] && paths+=":$wheels"
fi
export LD_LIBRARY_PATH="$paths${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The tests' independent references (ONNX Runtime, TensorBoard's reader, NumPy), where the node's
# python3 has them, as tools/reference-venv.sh's virtual environment has them elsewhere.
if python3 -c 'import numpy, onnxruntime, tensorboard' 2>/dev/null; then
  export NN_REFERENCE_PYTHON
  NN_REFERENCE_PYTHON=$(command -v python3)
fi
export TEST_TMPDIR=$tmp

if ! tar -C "$tmp" -xzf "$here/root.tar.gz" || ! cd "$tmp/root"; then
  echo "run.sh: cannot unpack $here/root.tar.gz" >&2
  exit 1
fi

gpus=0
if command -v nvidia-smi >/dev/null; then
  nvidia-smi >"$out/nvidia-smi.txt" 2>&1
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
fi
# The file a library name resolves to for the binaries (the first binary that needs it).
resolved() {
  ldd tests/* examples/* 2>/dev/null | awk -v name="$1" 'index($1, name) == 1 && $2 == "=>" {print $3; exit}'
}
{
  echo "bundle of commit $(cat "$here/commit.txt" 2>/dev/null || echo unknown), run $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname)"
  grep -m1 'model name' /proc/cpuinfo | sed 's/.*: /CPU: /'
  echo "GPUs: $gpus"
  if ((gpus > 0)); then
    nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | sed 's/^/  GPU /'
  fi
  # Each library by the file it resolves to, whose name carries its version (libcudnn.so.9.19.0).
  for name in libcudart.so libcublas.so libcublasLt.so libcudnn.so libnccl.so libopenblas.so libmpi.so; do
    path=$(resolved "$name")
    [ -n "$path" ] && echo "$name: $path -> $(readlink -f "$path")"
  done
  [ -f "$lib/libopenblas.so.0" ] && echo "libopenblas.so.0 (loaded by the library): $lib/libopenblas.so.0"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  echo "NN_REFERENCE_PYTHON=${NN_REFERENCE_PYTHON:-(none: the cases that compare with ONNX Runtime or TensorBoard are skipped)}"
  echo "JOBS=$jobs of $cores cores"
} >"$summary"
missing=$(ldd tests/* examples/* 2>/dev/null | awk '$2 == "=>" && $3 == "not" {print $1}' | sort -u | tr '\n' ' ')
if [ -n "$missing" ]; then
  echo "stopped: libraries that resolve nowhere: $missing(LD_LIBRARY_PATH above)" | tee -a "$summary" >&2
  exit 1
fi

# The binaries, those with the most CUDA work first, so that the long ones start early.
first=(data_parallel_test cuda_backend_test data_parallel_tables_test convolution_test allocation_test
  distributed_example_test onnx_export_test resnet_example_test resume_test lenet_cli_test)
order=()
for name in "${first[@]}"; do [ -x "tests/$name" ] && order+=("tests/$name"); done
for t in tests/*_test; do
  case " ${first[*]} " in *" $(basename "$t") "*) ;; *) order+=("$t") ;; esac
done

# Runs one binary; writes its line ("name: counts in N s") and its counts to results/.
mkdir -p "$tmp/results"
run_test() {
  local t=$1 name limit left begin status counts line="" p=0 f=0 s=0
  name=$(basename "$t")
  if ((SECONDS - started > total_limit)); then
    echo "$name: not run (the tests' $total_limit s were spent)" >"$tmp/results/$name.line"
    echo "0 1 0" >"$tmp/results/$name.counts"
    return
  fi
  limit=$test_limit
  grep -qx "$name" "$here/large-tests.txt" && limit=$((2 * test_limit))
  left=$((total_limit - (SECONDS - started)))
  ((limit > left)) && limit=$((left > 10 ? left : 10))
  begin=$SECONDS
  timeout -k 5 "$limit" "$t" >"$out/logs/$name.log" 2>&1
  status=$?
  counts=$(grep -h '^nn-test-cases:' "$out/logs/$name.log" | tail -n 1)
  if [ "$status" -eq 124 ]; then
    line="timed out after $limit s, in: $(grep -v '^$' "$out/logs/$name.log" | tail -n 1 | cut -c1-160)"
    f=1
  elif [ -z "$counts" ]; then
    line="exit $status, no count line"
    f=1
  else
    read -r p f s < <(echo "$counts" | sed -E 's/nn-test-cases: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/')
    # A binary that exits non-zero with no failed case (a crash after the count) counts as one,
    # and so does one that ran no case: it checked nothing.
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    if [ $((p + f + s)) -eq 0 ]; then
      f=1
      line="no test case ran; "
    fi
    line+="$p passed, $f failed, $s skipped"
    [ "$status" -ne 0 ] && line+=" (exit $status)"
  fi
  # A GPU that nvidia-smi lists but the tests cannot use is a failure, not skips.
  if ((gpus > 0)) && grep -q 'no CUDA device is available' "$out/logs/$name.log"; then
    f=$((f + 1))
    line+="; a GPU is listed but unusable: $(grep -m1 -o 'no CUDA device is available.*' "$out/logs/$name.log" | cut -c1-200)"
  fi
  {
    echo "$name: $line in $((SECONDS - begin)) s"
    # The first failed assertions, where it failed.
    ((f > 0)) && grep -m 3 -A 5 'FAILED:' "$out/logs/$name.log" | cut -c1-160 | sed 's/^/    /'
  } >"$tmp/results/$name.line"
  echo "$p $f $s" >"$tmp/results/$name.counts"
}

run_all() {
  for t in "${order[@]}"; do
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
    run_test "$t" &
  done
  wait
}

# compute-sanitizer over the CUDA cases of the kernels' and the table's tests.
sanitize() {
  local sanitizer limit=${SANITIZE_LIMIT:-420} tool name status errors
  sanitizer=$(command -v compute-sanitizer || echo "$cuda/bin/compute-sanitizer")
  if [ ! -x "$sanitizer" ]; then
    echo "sanitize: no compute-sanitizer (PATH, $cuda/bin)" | tee -a "$summary"
    return 1
  fi
  local failed=0
  for tool in memcheck racecheck synccheck; do
    for name in cuda_backend_test data_parallel_test communicator_test broadcast_test; do
      [ -x "tests/$name" ] || continue
      if ((SECONDS - started > limit)); then
        echo "$tool $name: not run (the $limit s were spent)" >>"$summary"
        continue
      fi
      timeout -k 5 240 "$sanitizer" --tool "$tool" --error-exitcode 86 "tests/$name" '[gpu],[multigpu]' \
        >"$out/logs/$tool-$name.log" 2>&1
      status=$?
      errors=$(grep -m1 -E '^========= (ERROR SUMMARY|RACECHECK SUMMARY)' "$out/logs/$tool-$name.log")
      echo "$tool $name: exit $status, ${errors:-no summary line}" >>"$summary"
      [ "$status" -ne 0 ] && failed=$((failed + 1))
    done
  done
  return $((failed > 0))
}

status=0
if [ "${MODE:-tests}" = sanitize ]; then
  sanitize || status=1
else
  run_all
  passed=0 failed=0 skipped=0
  for t in "${order[@]}"; do
    name=$(basename "$t")
    cat "$tmp/results/$name.line" >>"$summary"
    read -r p f s <"$tmp/results/$name.counts"
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
  done
  echo "tests: $passed passed, $failed failed, $skipped skipped" >>"$summary"
  ((failed > 0)) && status=1

  train() {  # DEVICES -> a line with the epoch's accuracy and images/s
    local log="$out/logs/lenet-${1//[:,]/_}.log"
    timeout -k 5 45 examples/lenet --epochs 1 --devices "$1" --data-dir "$here/data" >"$log" 2>&1
    local result=$?
    local last
    last=$(grep -E '^epoch 1 +train loss' "$log" | tail -n 1)
    if [ "$result" -eq 0 ] && [ -n "$last" ]; then
      echo "LeNet on $1: $last"
    else
      echo "LeNet on $1: failed (exit $result): $(tail -n 3 "$log" | tr '\n' ' ')"
      return 1
    fi
  }
  if [ -n "${DEVICES:-}" ]; then
    train "$DEVICES" >>"$summary" || status=1
  elif ((gpus == 0)); then
    echo "LeNet: not trained (no GPU; DEVICES=cpu:0 trains on the CPU)" >>"$summary"
  else
    train cuda:0 >>"$summary" || status=1
    if ((gpus >= 2)); then train cuda:0,cuda:1 >>"$summary" || status=1; fi
  fi
fi
echo "done in $((SECONDS - started)) s" >>"$summary"
tar -C "$out" -czf "$out/logs.tar.gz" logs
cat "$summary"
exit "$status"
