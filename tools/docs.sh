#!/usr/bin/env bash
# Browsable API pages of the public headers (nn/ and its layers' folders, nn/parallel, cunn/, nn/distributed's
# public three), made by Doxygen from their /// comments with docs/Doxyfile, into DIR (default
# build/docs, which git ignores); open DIR/html/index.html. Installs Debian's doxygen if missing
# (tools/install-deps.sh). Fails, after printing them all, on any warning of Doxygen's: a public
# member without a /// comment, a broken reference, an unknown command, a parameter documented
# that does not exist.
# Usage: tools/docs.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -le 1 ] || { echo "usage: tools/docs.sh [DIR]" >&2; exit 2; }
out=${1:-build/docs}
tools/install-deps.sh doxygen
mkdir -p "$out"
out=$(cd "$out" && pwd)
# The pages of an earlier run would outlive classes since removed.
rm -rf "$out/html"
if ! NN_DOCS_OUT="$out" doxygen docs/Doxyfile; then
  echo "tools/docs.sh: Doxygen warned (above); the pages in $out/html are incomplete" >&2
  exit 1
fi
echo "API pages: $out/html/index.html"
