#!/usr/bin/python3
"""Draws the curves of an example's --metrics file: train loss and test accuracy by epoch.

Usage: plot-metrics.py METRICS.json CURVES.png
METRICS.json holds a JSON object per line, as the examples append one per epoch (a resumed run
appends to the same file; the last line of each epoch counts). Needs Debian's python3-matplotlib.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    epochs = {}
    with open(sys.argv[1]) as f:
        for number, line in enumerate(f, 1):
            if line.strip():
                try:
                    m = json.loads(line)
                    epochs[int(m["epoch"])] = m
                except (ValueError, KeyError, TypeError) as e:
                    sys.exit(f"plot-metrics.py: {sys.argv[1]}:{number}: not a metrics line ({e})")
    if not epochs:
        sys.exit(f"plot-metrics.py: {sys.argv[1]} holds no epoch")
    x = sorted(epochs)
    figure, (loss, accuracy) = plt.subplots(1, 2, figsize=(9, 3.5))
    loss.plot(x, [epochs[e]["train_loss"] for e in x], marker="o")
    loss.set(xlabel="epoch", ylabel="train loss", title="Training loss")
    accuracy.plot(x, [epochs[e]["test_accuracy"] for e in x], marker="o", color="tab:green")
    accuracy.set(xlabel="epoch", ylabel="test accuracy", title="Test accuracy")
    for axes in (loss, accuracy):
        axes.grid(True, alpha=0.3)
        axes.xaxis.get_major_locator().set_params(integer=True)
    figure.tight_layout()
    figure.savefig(sys.argv[2], dpi=100)


if __name__ == "__main__":
    main()
