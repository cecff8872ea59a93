#!/usr/bin/env bash
# Installs the Debian packages the build needs, only those missing; a second run installs nothing.
# Usage: tools/install-deps.sh [extra-package ...]
set -euo pipefail

packages=(g++ bazel-bootstrap catch2 libopenblas-dev nlohmann-json3-dev zlib1g-dev libonnx-dev libprotobuf-dev libpng-dev libjpeg62-turbo-dev pkg-config cmake openmpi-bin libopenmpi-dev qemu-user iproute2 "$@")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing Debian packages: ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
