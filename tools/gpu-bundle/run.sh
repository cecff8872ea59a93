#!/usr/bin/env bash
# The runner of a bundle that tools/gpu-bundle.sh made: on a GPU node without Bazel, runs every
# test binary (their CUDA cases on the node's GPUs, the CPU cases as everywhere), then trains
# LeNet for one epoch on cuda:0 and, where there are two GPUs, on cuda:0,cuda:1, and writes to OUT:
# summary.txt (per binary "N passed, N failed, N skipped" or how it ended, the totals, LeNet's
# accuracy and images/s), each binary's output in logs/, and nvidia-smi's report.
# cuDNN and NCCL come from the CUDA toolkit ($CUDA_HOME, else /usr/local/cuda) or from PyTorch's
# nvidia-* wheels of the python3 on PATH. Each binary has a time limit (TEST_LIMIT seconds, 60;
# twice that for the tests Bazel runs as large, listed in large-tests.txt), none past TOTAL_LIMIT
# seconds (360) from the start, which leaves the trainings (45 s each at most) time within 8
# minutes.
# DEVICES=cpu:0 trains on that device instead (to try the bundle on a machine without a GPU).
# Usage: run.sh OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?"usage: run.sh OUT"}
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
test_limit=${TEST_LIMIT:-60}
total_limit=${TOTAL_LIMIT:-360}
started=$SECONDS

lib=$(mktemp -d)
tmp=$(mktemp -d)
trap 'rm -rf "$lib" "$tmp"' EXIT
for f in "$here"/lib/*.gz; do [ -e "$f" ] && gunzip -c "$f" >"$lib/$(basename "$f" .gz)"; done
paths=$lib
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

{
  echo "bundle of commit $(cat "$here/commit.txt" 2>/dev/null || echo unknown), run $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname)"
  grep -m1 'model name' /proc/cpuinfo | sed 's/.*: /CPU: /'
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  echo "NN_REFERENCE_PYTHON=${NN_REFERENCE_PYTHON:-(none: the cases that compare with ONNX Runtime or TensorBoard are skipped)}"
} >"$out/summary.txt"
gpus=0
if command -v nvidia-smi >/dev/null; then
  nvidia-smi >"$out/nvidia-smi.txt" 2>&1
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
fi
echo "GPUs: $gpus" >>"$out/summary.txt"

passed=0 failed=0 skipped=0
if ! tar -C "$tmp" -xzf "$here/root.tar.gz" || ! cd "$tmp/root"; then
  echo "run.sh: cannot unpack $here/root.tar.gz" >&2
  exit 1
fi
for t in tests/*_test; do
  name=$(basename "$t")
  if ((SECONDS - started > total_limit)); then
    echo "$name: not run (the tests' $total_limit s were spent)" >>"$out/summary.txt"
    failed=$((failed + 1))
    continue
  fi
  limit=$test_limit
  grep -qx "$name" "$here/large-tests.txt" && limit=$((2 * test_limit))
  left=$((total_limit - (SECONDS - started)))
  ((limit > left)) && limit=$((left > 10 ? left : 10))
  begin=$SECONDS
  line=""
  timeout -k 5 "$limit" "$t" >"$out/logs/$name.log" 2>&1
  status=$?
  counts=$(grep -h '^nn-test-cases:' "$out/logs/$name.log" | tail -n 1)
  if [ "$status" -eq 124 ]; then
    line="timed out after $limit s"
    failed=$((failed + 1))
  elif [ -z "$counts" ]; then
    line="exit $status, no count line"
    failed=$((failed + 1))
  else
    read -r p f s < <(echo "$counts" | sed -E 's/nn-test-cases: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/')
    passed=$((passed + p)) skipped=$((skipped + s))
    # A binary that exits non-zero with no failed case (a crash after the count) counts as one,
    # and so does one that ran no case: it checked nothing.
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    if [ $((p + f + s)) -eq 0 ]; then
      f=1
      line="no test case ran; "
    fi
    failed=$((failed + f))
    line="${line:-}$p passed, $f failed, $s skipped"
    [ "$status" -ne 0 ] && line+=" (exit $status)"
  fi
  echo "$name: $line in $((SECONDS - begin)) s" >>"$out/summary.txt"
done
echo "tests: $passed passed, $failed failed, $skipped skipped" >>"$out/summary.txt"

train() {  # DEVICES -> a line with the epoch's accuracy and images/s
  local log="$out/logs/lenet-${1//[:,]/_}.log"
  timeout -k 5 45 examples/lenet --epochs 1 --devices "$1" --data-dir "$here/data" >"$log" 2>&1
  local status=$?
  local last
  last=$(grep -E '^epoch 1 +train loss' "$log" | tail -n 1)
  if [ "$status" -eq 0 ] && [ -n "$last" ]; then
    echo "LeNet on $1: $last"
  else
    echo "LeNet on $1: failed (exit $status): $(tail -n 3 "$log" | tr '\n' ' ')"
  fi
}
if [ -n "${DEVICES:-}" ]; then
  train "$DEVICES" >>"$out/summary.txt"
elif ((gpus == 0)); then
  echo "LeNet: not trained (no GPU; DEVICES=cpu:0 trains on the CPU)" >>"$out/summary.txt"
else
  train cuda:0 >>"$out/summary.txt"
  if ((gpus >= 2)); then train cuda:0,cuda:1 >>"$out/summary.txt"; fi
fi
echo "done in $((SECONDS - started)) s" >>"$out/summary.txt"
cat "$out/summary.txt"
# Non-zero where any test failed or LeNet did not train, so that a caller sees it.
[ "$failed" -eq 0 ] && ! grep -q '^LeNet on .*: failed' "$out/summary.txt"
