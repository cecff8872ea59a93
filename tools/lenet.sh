#!/usr/bin/env bash
# Trains LeNet on Fashion-MNIST: installs missing Debian packages (the data set among them),
# builds, and runs the example. Arguments go to the example (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh dataset-fashion-mnist
bazel build //examples:lenet
exec bazel-bin/examples/lenet "$@"
