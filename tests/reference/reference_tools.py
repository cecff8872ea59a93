"""What the tests/make_*_reference.py scripts share: float literals of C++ and the tables they
print, and tensors of closed formulas over flat row-major indices."""
import math

import torch


def literal(v):
    """A float as a C++ literal that reads back to the same float: 0.5f, 2.f, 1e-05f."""
    text = "%.9g" % float(v)
    return text + ("f" if "." in text or "e" in text else ".f")


def line_table(name, values):
    """inline const std::vector<float> NAME{...}; on one line."""
    return "inline const std::vector<float> %s{%s};\n" % (name, ", ".join(literal(v) for v in values))


def block_table(name, t):
    """The same for a tensor's values, six to a line."""
    values = [literal(v) for v in t.detach().reshape(-1)]
    lines = ["    " + ", ".join(values[k:k + 6]) + "," for k in range(0, len(values), 6)]
    return "inline const std::vector<float> %s{\n%s\n};\n" % (name, "\n".join(lines))


def formula(f, sizes):
    """A float32 tensor of `sizes` whose element at flat row-major index i is f(i)."""
    n = math.prod(sizes)
    return torch.tensor([f(i) for i in range(n)], dtype=torch.float32).reshape(sizes)
