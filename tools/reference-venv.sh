#!/usr/bin/env bash
# Prints the Python of a virtual environment with the independent references some tests
# compare against, the newest from PyPI: ONNX Runtime (the ONNX export runs in it) and
# TensorBoard (it reads the examples' event files), with NumPy. Outside the repository
# (REFERENCE_VENV, default ~/.cache/nn-reference/venv), installed there first if missing;
# tools/test.sh gives it to the tests as NN_REFERENCE_PYTHON. Exits 1 with the reason on stderr
# where it cannot (no network, no wheel for this Python or CPU); those tests are then skipped,
# not passed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

venv=${REFERENCE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/nn-reference/venv}
works() { "$venv/bin/python" -c 'import numpy, onnxruntime, tensorboard' >/dev/null 2>&1; }

if ! works; then
  tools/install-deps.sh python3-venv >&2 || exit 1
  echo "Installing PyPI's onnxruntime, tensorboard and numpy into $venv" >&2
  { /usr/bin/python3 -m venv "$venv" &&
    "$venv/bin/python" -m pip install -q --retries 2 --timeout 30 --upgrade onnxruntime tensorboard numpy; } >&2 || {
    echo "$(basename "$0"): could not install onnxruntime and tensorboard from PyPI into $venv" >&2
    exit 1
  }
  works || { echo "$(basename "$0"): onnxruntime or tensorboard does not load in $venv" >&2; exit 1; }
fi
echo "$venv/bin/python"
