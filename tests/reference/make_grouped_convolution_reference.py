"""Prints tests/reference/GroupedConvolutionReference.h: PyTorch's outputs and gradients (input, weight,
bias) of grouped convolutions (conv2d with groups), for tests/modules/convolution_groups_test.cpp.

Run with PyTorch (python make_grouped_convolution_reference.py > GroupedConvolutionReference.h,
from tests/, in the virtual environment of tools/bench-peers.sh); the test holds the printed
numbers, not a dependency on PyTorch. The values are the closed formulas of
tests/reference/make_convolution_reference.py, exact in float: input[i] = ((5 i) % 17 - 8) / 8,
weight[i] = ((3 i) % 7 - 3) / 4, bias[i] = ((2 i) % 5 - 2) / 2, gradOutput[i] = ((7 i) % 13 - 6) / 4;
every product and sum is then exact, in any order.
"""

import torch
import torch.nn.functional as F
from reference_tools import formula, block_table as table


def reference(name, input_sizes, weight_sizes, bias_size, f):
    x = formula(lambda i: ((5 * i) % 17 - 8) / 8, input_sizes).requires_grad_()
    w = formula(lambda i: ((3 * i) % 7 - 3) / 4, weight_sizes).requires_grad_()
    b = formula(lambda i: ((2 * i) % 5 - 2) / 2, (bias_size,)).requires_grad_()
    y = f(x, w, b)
    g = formula(lambda i: ((7 * i) % 13 - 6) / 4, tuple(y.shape))
    gx, gw, gb = torch.autograd.grad(y, (x, w, b), g)
    return (table("kTorch%s" % name, y) + table("kTorch%sGradInput" % name, gx) +
            table("kTorch%sGradWeight" % name, gw) + table("kTorch%sGradBias" % name, gb))


print("// PyTorch %s's grouped convolutions of the inputs described in" % torch.__version__.split("+")[0])
print("// tests/reference/make_grouped_convolution_reference.py, which wrote this file and says how. Do not edit.")
print("#pragma once\n\n#include <vector>\n\nnamespace nn::test {\n")
# SpatialConvolution(4 -> 6, kW 2, kH 3, dW 1, dH 2, padW 1, padH 1, groups 2) on [2, 4, 6, 7].
print(reference("Grouped", (2, 4, 6, 7), (6, 2, 3, 2), 6,
                lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 1), groups=2)))
# A depthwise 3x3 with two filters per plane: SpatialConvolution(3 -> 6, 3x3, 2,2, 1,1, groups 3)
# on [2, 3, 7, 6].
print(reference("Depthwise", (2, 3, 7, 6), (6, 1, 3, 3), 6,
                lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=3)))
print("}  // namespace nn::test")
