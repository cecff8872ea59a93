#!/usr/bin/python3
"""Draws the curves of an example's --metrics file: train loss and test accuracy by epoch.

Usage: plot-metrics.py METRICS.json CURVES.png
METRICS.json holds a JSON object per line, as the examples append one per epoch (a resumed run
appends to the same file; the last line of each epoch counts). The output's extension is a format
matplotlib writes (png, pdf, svg, ...). Needs Debian's python3-matplotlib.
"""
import json
import math
import os
import sys

PROGRAM = "plot-metrics.py"


def fail(message):
    sys.exit(f"{PROGRAM}: {message}")


def number(m, key, where):
    """m[key] as a float: a JSON number (NaN and infinities are drawn as gaps), not text."""
    if key not in m:
        fail(f"{where}: no '{key}' (an example's --metrics line has 'epoch', 'train_loss' and 'test_accuracy')")
    value = m[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        fail(f"{where}: '{key}' is {json.dumps(value)}, not a number")
    return float(value)


def read_epochs(path):
    """{epoch: (train loss, test accuracy)}, the last line of each epoch counting."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    except UnicodeDecodeError as e:
        fail(f"{path}: not UTF-8 text (byte {e.start}): not a metrics file")
    epochs = {}
    for line_number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{line_number}"
        try:
            m = json.loads(line)
        except ValueError as e:
            fail(f"{where}: not a JSON line ({e})")
        if not isinstance(m, dict):
            fail(f"{where}: not a JSON object")
        epoch = number(m, "epoch", where)
        if not math.isfinite(epoch) or epoch != int(epoch) or epoch < 0:
            fail(f"{where}: 'epoch' is {m['epoch']}, not an epoch number")
        epochs[int(epoch)] = (number(m, "train_loss", where), number(m, "test_accuracy", where))
    if not epochs:
        fail(f"{path} holds no epoch")
    return epochs


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    epochs = read_epochs(sys.argv[1])
    output = sys.argv[2]
    try:
        import matplotlib
    except ImportError:
        fail("needs matplotlib (Debian's python3-matplotlib)")
    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    figure, (loss, accuracy) = plt.subplots(1, 2, figsize=(9, 3.5))
    extension = os.path.splitext(output)[1].lstrip(".").lower()
    formats = figure.canvas.get_supported_filetypes()
    if extension not in formats:
        fail(f"{output}: cannot write '.{extension}' files; one of {', '.join(sorted(formats))}")
    x = sorted(epochs)
    loss.plot(x, [epochs[e][0] for e in x], marker="o")
    loss.set(xlabel="epoch", ylabel="train loss", title="Training loss")
    accuracy.plot(x, [epochs[e][1] for e in x], marker="o", color="tab:green")
    accuracy.set(xlabel="epoch", ylabel="test accuracy", title="Test accuracy")
    for axes in (loss, accuracy):
        axes.grid(True, alpha=0.3)
        axes.xaxis.get_major_locator().set_params(integer=True)
    figure.tight_layout()
    try:
        figure.savefig(output, dpi=100)
    except OSError as e:
        fail(f"cannot write {output}: {e.strerror}")


if __name__ == "__main__":
    main()
