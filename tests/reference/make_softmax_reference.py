"""Prints tests/reference/SoftMaxReference.h: PyTorch's softmax and log-softmax of a [4, 10, 3, 5] input
over its class dimension (1), and their input gradients, for tests/modules/softmax_test.cpp.

Run once with PyTorch 1.13 (python3 tests/reference/make_softmax_reference.py > tests/reference/SoftMaxReference.h);
the test holds the printed numbers, not a dependency on PyTorch. Inputs and output gradients
are closed formulas the test computes as well, over flat row-major indices i:
  input[i] = 5 sin(0.37 i), gradOutput[i] = cos(0.11 i).
"""
import math

import torch
from reference_tools import block_table as table

SIZES = (4, 10, 3, 5)


def formula(f):
    n = math.prod(SIZES)
    return torch.tensor([f(i) for i in range(n)], dtype=torch.float32).reshape(SIZES)


x = formula(lambda i: 5 * math.sin(0.37 * i)).requires_grad_()
g = formula(lambda i: math.cos(0.11 * i))
soft = torch.softmax(x, 1)
(soft_grad,) = torch.autograd.grad(soft, x, g)
log = torch.log_softmax(x, 1)
(log_grad,) = torch.autograd.grad(log, x, g)
print("// PyTorch %s's softmax and log-softmax over dimension 1 of a [4, 10, 3, 5] input, and their"
      % torch.__version__.split("a")[0])
print("// input gradients: written by tests/reference/make_softmax_reference.py, which says how. Do not edit.")
print("#pragma once\n\n#include <vector>\n\nnamespace nn::test {\n")
print(table("kTorchSoftMax", soft))
print(table("kTorchSoftMaxGradInput", soft_grad))
print(table("kTorchLogSoftMax", log))
print(table("kTorchLogSoftMaxGradInput", log_grad))
print("}  // namespace nn::test")
