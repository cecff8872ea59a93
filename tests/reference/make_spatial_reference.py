"""Prints the PyTorch reference tables of tests/modules/convolution_test.cpp and tests/modules/pooling_test.cpp.

Run once with PyTorch 1.13 (python3 tests/reference/make_spatial_reference.py); the tests hold the
printed numbers, not a dependency on PyTorch. Inputs, weights and output gradients are the
closed formulas the tests use as well:
  input[i] = sin(0.37 i), weight[i] = 0.3 cos(0.23 i), bias[o] = 0.05 (o + 1) - 0.1,
  gradOutput[i] = cos(0.11 i), over flat row-major indices i.
"""
import math

import torch
import torch.nn.functional as F


def formula(sizes, f):
    n = math.prod(sizes)
    return torch.tensor([f(i) for i in range(n)], dtype=torch.float32).reshape(sizes)


def literal(v):
    s = "%.8g" % v
    return s + ("f" if "." in s or "e" in s else ".f")


def table(name, t):
    values = [float(v) for v in t.detach().reshape(-1)]
    lines = []
    for k in range(0, len(values), 6):
        lines.append("    " + ", ".join(literal(v) for v in values[k:k + 6]) + ",")
    shape = ", ".join(str(s) for s in t.shape)
    return "// %s: [%s]\nconst std::vector<float> %s = {\n%s\n};\n" % (name, shape, name, "\n".join(lines))


def run(fn, x_sizes, params=()):
    x = formula(x_sizes, lambda i: math.sin(0.37 * i)).requires_grad_()
    for p in params:
        p.requires_grad_()
    y = fn(x, *params)
    g = formula(list(y.shape), lambda i: math.cos(0.11 * i))
    y.backward(g)
    return y, x.grad


def convolution():
    # nn.SpatialConvolution(2 -> 3, 3x5, 2,2, 1,1): kW = 3, kH = 5.
    w = formula([3, 2, 5, 3], lambda i: 0.3 * math.cos(0.23 * i))
    b = formula([3], lambda o: 0.05 * (o + 1) - 0.1)
    y, gx = run(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), [2, 2, 7, 9], (w, b))
    print(table("kConvOutput", y) + table("kConvGradInput", gx) + table("kConvGradWeight", w.grad) +
          table("kConvGradBias", b.grad))


def pooling():
    sizes = [2, 1, 6, 7]
    cases = [
        ("kMaxFloor", lambda x: F.max_pool2d(x, 3, 2, 1)),
        ("kMaxCeil", lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True)),
        ("kAvgFloor", lambda x: F.avg_pool2d(x, 3, 2, 1)),
        ("kAvgCeil", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True)),
        ("kAvgCeilExcludePad", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)),
    ]
    for name, fn in cases:
        y, gx = run(fn, sizes)
        print(table(name + "Output", y) + table(name + "GradInput", gx))


if __name__ == "__main__":
    print("// ---- convolution ----")
    convolution()
    print("// ---- pooling ----")
    pooling()
