#!/usr/bin/env bash
# Prints the Python of a virtual environment with ONNX Runtime and NumPy from PyPI (the newest),
# outside the repository (ONNXRUNTIME_VENV, default ~/.cache/nn-onnx/venv), installing them
# there first if missing. The ONNX export tests compare this library's forward with ONNX
# Runtime's run of the exported file through it (tools/test.sh passes it to them as
# NN_ONNXRUNTIME_PYTHON). Exits 1 with the reason on stderr where it cannot (no network, no
# wheel for this Python or CPU); the tests are then skipped, not passed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

venv=${ONNXRUNTIME_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/nn-onnx/venv}
works() { "$venv/bin/python" -c 'import numpy, onnxruntime' >/dev/null 2>&1; }

if ! works; then
  tools/install-deps.sh python3-venv >&2 || exit 1
  echo "Installing PyPI's onnxruntime and numpy into $venv" >&2
  { /usr/bin/python3 -m venv "$venv" && "$venv/bin/python" -m pip install -q --retries 2 --timeout 30 --upgrade onnxruntime numpy; } >&2 || {
    echo "$(basename "$0"): could not install onnxruntime from PyPI into $venv" >&2
    exit 1
  }
  works || { echo "$(basename "$0"): onnxruntime does not load in $venv" >&2; exit 1; }
fi
echo "$venv/bin/python"
