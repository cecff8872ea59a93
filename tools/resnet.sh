#!/usr/bin/env bash
# Trains the residual network example on Fashion-MNIST: installs missing Debian packages (the
# data set among them), builds, and runs it. Arguments go to the example (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh dataset-fashion-mnist
bazel build //examples:resnet
exec bazel-bin/examples/resnet "$@"
