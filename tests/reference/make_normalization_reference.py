"""Prints tests/reference/NormalizationReference.h: PyTorch's outputs, input gradients and parameter
gradients of layer normalisation (LayerNorm([3, 5]) of a [4, 3, 5] input, and LayerNorm([5])
without affine parameters of a [2, 3, 5] one) and group normalisation (GroupNorm(3, 6, eps 1e-3)
of a [2, 6, 2, 3] input, and GroupNorm(2, 4) without affine parameters of a [3, 4] one), for
tests/modules/normalization_test.cpp.

Run with PyTorch (python make_normalization_reference.py > NormalizationReference.h, from
tests/, in the virtual environment of tools/bench-peers.sh); the test holds the printed numbers,
not a dependency on PyTorch. Inputs, gradOutputs and parameters are exact in float, closed
formulas over flat row-major indices i that the test computes as well (nn::test::exactValues):
input[i] = ((5 i) % 17 - 8) / 8, gradOutput[i] = ((7 i) % 13 - 6) / 4, weight[i] =
((3 i) % 7 + 1) / 4, bias[i] = ((2 i) % 5 - 2) / 8.
"""

import torch
import torch.nn.functional as F
from reference_tools import formula, block_table as table


def reference(name, sizes, parameter_sizes, f):
    """f(x, weight, bias): output, input gradient and, with parameters, their gradients."""
    x = formula(lambda i: ((5 * i) % 17 - 8) / 8, sizes).requires_grad_()
    g = formula(lambda i: ((7 * i) % 13 - 6) / 4, sizes)
    if parameter_sizes is None:
        y = f(x, None, None)
        (gx,) = torch.autograd.grad(y, x, g)
        return table("kTorch%s" % name, y) + table("kTorch%sGradInput" % name, gx)
    w = formula(lambda i: ((3 * i) % 7 + 1) / 4, parameter_sizes).requires_grad_()
    b = formula(lambda i: ((2 * i) % 5 - 2) / 8, parameter_sizes).requires_grad_()
    y = f(x, w, b)
    gx, gw, gb = torch.autograd.grad(y, (x, w, b), g)
    return (table("kTorch%s" % name, y) + table("kTorch%sGradInput" % name, gx) +
            table("kTorch%sGradWeight" % name, gw) + table("kTorch%sGradBias" % name, gb))


print("// PyTorch %s's layer and group normalisation of the inputs below, their input gradients and"
      % torch.__version__.split("a")[0])
print("// parameter gradients: written by tests/reference/make_normalization_reference.py, which says how. Do not edit.")
print("#pragma once\n\n#include <vector>\n\nnamespace nn::test {\n")
print(reference("LayerNorm", (4, 3, 5), (3, 5), lambda x, w, b: F.layer_norm(x, (3, 5), w, b, eps=1e-5)))
print(reference("LayerNormPlain", (2, 3, 5), None, lambda x, w, b: F.layer_norm(x, (5,), eps=1e-5)))
print(reference("GroupNorm", (2, 6, 2, 3), (6,), lambda x, w, b: F.group_norm(x, 3, w, b, eps=1e-3)))
print(reference("GroupNormPlain", (3, 4), None, lambda x, w, b: F.group_norm(x, 2, eps=1e-5)))
print("}  // namespace nn::test")
