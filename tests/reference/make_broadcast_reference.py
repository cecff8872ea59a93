"""Prints tests/reference/BroadcastReference.h: PyTorch's outputs, input gradients and parameter gradients
of a parameter multiplied into (CMul, Mul) or added to (Add) an input it is broadcast against,
of PReLU's slopes (a slope per plane, and one shared), and of sums, means and maxima along a
dimension (Sum, Mean, Max), for tests/modules/broadcast_test.cpp and tests/modules/prelu_test.cpp.

Run once with PyTorch 1.13 (python3 tests/reference/make_broadcast_reference.py >
tests/reference/BroadcastReference.h); the test holds the printed numbers, not a dependency on PyTorch.
Inputs, gradOutputs and parameters are exact in float, closed formulas over flat row-major
indices i that the test computes as well: input[i] = ((5 i) % 17 - 8) / 8, gradOutput[i] =
((7 i) % 13 - 6) / 4, parameter[i] = ((3 i) % 7 - 3) / 4.
"""

import torch
from reference_tools import formula, block_table as table


def inputs(sizes):
    return formula(lambda i: ((5 * i) % 17 - 8) / 8, sizes).requires_grad_()


def grad_output(sizes):
    return formula(lambda i: ((7 * i) % 13 - 6) / 4, sizes)


def with_parameter(name, sizes, parameter_sizes, f, view=None):
    """f(x, p): output, input gradient and parameter gradient."""
    x = inputs(sizes)
    p = formula(lambda i: ((3 * i) % 7 - 3) / 4, parameter_sizes).requires_grad_()
    y = f(x, p if view is None else p.reshape(view))
    gx, gp = torch.autograd.grad(y, (x, p), grad_output(tuple(y.shape)))
    return table("kTorch%s" % name, y) + table("kTorch%sGradInput" % name, gx) + \
        table("kTorch%sGradParameter" % name, gp)


def reduction(name, sizes, f):
    x = inputs(sizes)
    y = f(x)
    (gx,) = torch.autograd.grad(y, x, grad_output(tuple(y.shape)))
    return table("kTorch%s" % name, y) + table("kTorch%sGradInput" % name, gx)


print("// PyTorch %s's broadcast products and sums, sums and means along a dimension, of the inputs"
      % torch.__version__.split("a")[0])
print("// described in tests/reference/make_broadcast_reference.py, which wrote this file. Do not edit.")
print("#pragma once\n\n#include <vector>\n\nnamespace nn::test {\n")
mul = lambda x, p: x * p
add = lambda x, p: x + p
print(with_parameter("CMulPlanes", (2, 3, 2, 2), (1, 3, 1, 1), mul))
print(with_parameter("CMulSample", (2, 3, 2, 2), (3, 2, 2), mul))
print(with_parameter("CMulColumns", (2, 3, 4), (3, 1), mul))
print(with_parameter("Mul", (2, 3, 4), (1,), mul))
# Torch7's batch mode: a bias of one sample's 12 elements on [2, 3, 2, 2].
print(with_parameter("AddFlat", (2, 3, 2, 2), (12,), add, view=(3, 2, 2)))
print(with_parameter("AddPlanes", (2, 3, 2, 2), (1, 3, 1, 1), add))
print(with_parameter("PReLUPlanes", (2, 3, 2, 2), (3,), lambda x, p: torch.nn.functional.prelu(x, p)))
print(with_parameter("PReLUShared", (2, 3, 4), (1,), lambda x, p: torch.nn.functional.prelu(x, p)))
print(reduction("Sum1", (2, 3, 4), lambda x: x.sum(1)))
print(reduction("MeanLast", (2, 3, 4), lambda x: x.mean(2)))
print(reduction("SumKept", (2, 3, 4), lambda x: x.sum(0, keepdim=True)))
# Ties among the maxima: the gradient goes to the first.
print(reduction("Max1", (2, 3, 4), lambda x: x.max(1).values))
print(reduction("MaxLast", (3, 4, 5), lambda x: x.max(2).values))
print("}  // namespace nn::test")
