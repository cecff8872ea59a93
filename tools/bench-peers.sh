# Sourced by the benchmarks beside PyTorch (tools/bench-lenet.sh, tools/bench-suite.sh): sets
# `peers` to the --torch arguments of their comparison scripts. The peer is the newest torch on
# PyPI, installed if missing into a virtual environment outside the repository (TORCH_VENV,
# default ~/.cache/nn-bench/torch-venv); Debian's python3-torch is a second row (with
# DEBIAN_TORCH=0, only where PyPI's cannot be installed).
venv=${TORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/nn-bench/torch-venv}

# Whether a Python trains with its torch on the CPU, with gloo for DDP.
torch_works() {
  "$1" - <<'EOF' >/dev/null 2>&1
import torch, torch.distributed
m = torch.nn.Conv2d(1, 2, 3)
m(torch.randn(2, 1, 5, 5)).sum().backward()
assert m.weight.grad is not None and torch.distributed.is_gloo_available()
EOF
}

# Free space, in GB, of the file system that holds (or will hold) $1.
free_gb() {
  local dir=$1
  while [ ! -d "$dir" ]; do dir=$(dirname "$dir"); done
  df -P -k "$dir" | awk 'NR == 2 {print int($4 / 1048576)}'
}

# PyPI's Linux torch needs CUDA's libraries to load, even on the CPU, and pulls them as
# nvidia-* wheels (about 5 GB installed). First torch alone (0.5 GB download) with its small
# pure-Python dependencies: enough where a CUDA toolkit provides those libraries; else the whole
# install.
install_pypi_torch() {
  if [ "$(free_gb "$venv")" -lt 10 ]; then
    echo "$(basename "$0"): less than 10 GB free for $venv; PyPI's torch is not installed" >&2
    return 1
  fi
  echo "Installing PyPI's torch into $venv" >&2
  /usr/bin/python3 -m venv "$venv" >&2 || return 1
  # The small dependencies before torch: pip then has no missing requirement to warn of.
  "$venv/bin/python" -m pip install -q filelock typing-extensions sympy networkx jinja2 fsspec numpy >&2 ||
    return 1
  "$venv/bin/python" -m pip install -q --no-deps torch >&2 || return 1
  torch_works "$venv/bin/python" && return 0
  local version
  version=$("$venv/bin/python" -m pip show torch | sed -n 's/^Version: //p')
  echo "torch $version does not load without its CUDA wheels here; installing them (about 5 GB)" >&2
  "$venv/bin/python" -m pip install -q "torch==$version" >&2 && torch_works "$venv/bin/python"
}

peers=()
if [ -x "$venv/bin/python" ] && torch_works "$venv/bin/python" || install_pypi_torch; then
  peers+=(--torch "PyPI=$venv/bin/python")
else
  echo "$(basename "$0"): no working torch from PyPI; comparing with Debian's only" >&2
fi
if { [ "${DEBIAN_TORCH:-1}" != 0 ] || [ ${#peers[@]} -eq 0 ]; } && torch_works /usr/bin/python3; then
  peers+=(--torch "Debian=/usr/bin/python3")
fi
[ ${#peers[@]} -gt 0 ] || { echo "$(basename "$0"): no PyTorch to compare with" >&2; exit 1; }

