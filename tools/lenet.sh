#!/usr/bin/env bash
# Trains LeNet on Fashion-MNIST: installs missing Debian packages (the data set among them),
# builds, and runs the example. Arguments go to the example (try --help), except a leading
# `--ranks N`: N processes under mpirun on this host, each training its share of every batch
# (--batch-size is per process) with the --devices given.
set -euo pipefail
cd "$(dirname "$0")/.."

ranks=1
if [ "${1:-}" = "--ranks" ]; then
  ranks=${2:?"--ranks needs a number of processes"}
  shift 2
fi
tools/install-deps.sh dataset-fashion-mnist
bazel build //examples:lenet
if [ "$ranks" -eq 1 ]; then
  exec bazel-bin/examples/lenet "$@"
fi
launch=(mpirun -np "$ranks" --oversubscribe --bind-to none)
[ "$(id -u)" -eq 0 ] && launch+=(--allow-run-as-root)
exec "${launch[@]}" bazel-bin/examples/lenet "$@"
