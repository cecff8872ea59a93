"""Prints the scalars of a TensorBoard log folder as TensorBoard's own reader sees them, for
tests/io/summary_writer_test.cpp: one line per value, "tag step value wall_time", sorted.

Usage: tensorboard_scalars.py LOGDIR
"""
import sys

from tensorboard.backend.event_processing import event_accumulator


def main(logdir):
    accumulator = event_accumulator.EventAccumulator(logdir, size_guidance={event_accumulator.SCALARS: 0})
    accumulator.Reload()
    lines = []
    for tag in accumulator.Tags()["scalars"]:
        for s in accumulator.Scalars(tag):
            lines.append(f"{tag} {s.step} {s.value!r} {s.wall_time!r}")
    print("\n".join(sorted(lines)))


if __name__ == "__main__":
    main(sys.argv[1])
