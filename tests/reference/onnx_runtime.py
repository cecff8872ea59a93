"""Runs exported ONNX models with ONNX Runtime for tests/onnx/onnx_export_test.cpp.

Usage: onnx_runtime.py FOLDER. Each sub-folder of FOLDER is one run: `model` holds the path of
the .onnx file; each graph input NAME has NAME.shape (sizes, space-separated) and NAME.bin
(little-endian float32). Writes each graph output NAME as NAME.out.shape and NAME.out.bin.
One thread, default graph optimisations: a model as it is served.
"""
import os
import sys

import numpy as np
import onnxruntime as ort


def main(folder):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    sessions = {}
    for run in sorted(os.listdir(folder)):
        d = os.path.join(folder, run)
        with open(os.path.join(d, "model")) as f:
            model = f.read().strip()
        if model not in sessions:
            sessions[model] = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        session = sessions[model]
        feeds = {}
        for i in session.get_inputs():
            with open(os.path.join(d, i.name + ".shape")) as f:
                shape = [int(s) for s in f.read().split()]
            feeds[i.name] = np.fromfile(os.path.join(d, i.name + ".bin"), dtype="<f4").reshape(shape)
        for o, value in zip(session.get_outputs(), session.run(None, feeds)):
            value = np.ascontiguousarray(value, dtype="<f4")
            with open(os.path.join(d, o.name + ".out.shape"), "w") as f:
                f.write(" ".join(str(s) for s in value.shape))
            value.tofile(os.path.join(d, o.name + ".out.bin"))


if __name__ == "__main__":
    main(sys.argv[1])
