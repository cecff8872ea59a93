"""Prints tests/reference/ActivationReference.h: PyTorch's outputs and input gradients of Threshold(0.5, -2),
HardTanh(-1, 2.5), ReLU6, SoftPlus(beta 2, threshold 5), SiLU and GELU (exact and
approximate='tanh') for tests/modules/threshold_test.cpp, tests/modules/softplus_test.cpp and
tests/modules/silu_gelu_test.cpp.

Run with PyTorch (python tests/reference/make_activation_reference.py > tests/reference/ActivationReference.h, from
tests/, in the virtual environment of tools/bench-peers.sh); the test holds the printed numbers,
not a dependency on PyTorch. PyTorch 1.13 printed the first four; 2.15, which added SiLU and
GELU, prints the same numbers for them. The inputs sit on both sides of every bound and on the
bounds themselves (-1, 0, 0.5, 2.5, 6), and reach 25, where SiLU and GELU are x itself.
"""
import torch
import torch.nn.functional as F
from reference_tools import line_table as table

X = [-3, -1.25, -1, -0.5, -0.0625, 0, 0.5, 0.625, 1, 2.5, 6, 7.5, 25]
GRAD = [0.5, -1, 2, 1.5, -0.75, 3, -2, 1.25, -0.5, 0.25, 4, -3, 1]


def reference(name, f):
    x = torch.tensor(X, dtype=torch.float32, requires_grad=True)
    y = f(x)
    (grad,) = torch.autograd.grad(y, x, torch.tensor(GRAD, dtype=torch.float32))
    return table("kTorch%s" % name, y.detach().tolist()) + table("kTorch%sGradInput" % name, grad.tolist())


print("// PyTorch %s's threshold, hardtanh, relu6, softplus, silu and gelu of the inputs below, and"
      % torch.__version__.split("a")[0])
print("// their input gradients: written by tests/reference/make_activation_reference.py, which says how. Do not edit.")
print("#pragma once\n\n#include <vector>\n\nnamespace nn::test {\n")
print(table("kActivationX", X) + table("kActivationGrad", GRAD))
print(reference("Threshold", lambda x: F.threshold(x, 0.5, -2.0)))
print(reference("HardTanh", lambda x: F.hardtanh(x, -1.0, 2.5)))
print(reference("ReLU6", lambda x: F.relu6(x)))
print(reference("SoftPlus", lambda x: F.softplus(x, beta=2, threshold=5)))
print(reference("SiLU", lambda x: F.silu(x)))
print(reference("GELU", lambda x: F.gelu(x)))
print(reference("GELUTanh", lambda x: F.gelu(x, approximate="tanh")))
print("}  // namespace nn::test")
