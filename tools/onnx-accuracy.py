#!/usr/bin/env python3
"""Accuracy of an exported Fashion-MNIST classifier, run by ONNX Runtime over the test set.

Usage: onnx-accuracy.py MODEL.onnx [DATA_DIR]
DATA_DIR holds t10k-images-idx3-ubyte(.gz) and t10k-labels-idx1-ubyte(.gz) (default: Debian's
dataset-fashion-mnist). The pixels are prepared as the examples train on them: scaled to [0, 1]
(nn::FashionMnist), then standardised with the training set's mean and deviation
(examples/Trainer.cpp), in float32 as there; the class is the output's largest score. Prints "test accuracy 0.NNNN", as the examples print theirs. Needs
onnxruntime and numpy (tools/reference-venv.sh prints a Python that has them).
"""
import gzip
import os
import sys

import numpy as np
import onnxruntime as ort

# examples/Trainer.cpp's standardize().
MEAN, DEVIATION = 0.2860, 0.3530


def idx(folder, name):
    for path, opener in ((os.path.join(folder, name + ".gz"), gzip.open), (os.path.join(folder, name), open)):
        if os.path.exists(path):
            with opener(path, "rb") as f:
                data = f.read()
            dims = data[3]
            sizes = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
            return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(sizes)
    sys.exit(f"onnx-accuracy.py: no {name}(.gz) in {folder}")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    folder = sys.argv[2] if len(sys.argv) == 3 else "/usr/share/datasets/fashion-mnist"
    images = idx(folder, "t10k-images-idx3-ubyte").astype(np.float32)[:, None, :, :] / np.float32(255)
    images = (images - np.float32(MEAN)) / np.float32(DEVIATION)
    labels = idx(folder, "t10k-labels-idx1-ubyte")
    session = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    correct = 0
    for start in range(0, len(images), 1000):
        scores = session.run(None, {name: images[start:start + 1000]})[0]
        correct += int((scores.argmax(axis=1) == labels[start:start + 1000]).sum())
    print(f"test accuracy {correct / len(images):.4f}")


if __name__ == "__main__":
    main()
