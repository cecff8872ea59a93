"""Prints tests/reference/ConvolutionReference.h: PyTorch's outputs and gradients (input, weight, bias) of
a dilated convolution (conv2d with dilation) and of a transposed convolution (conv_transpose2d
with output_padding), for tests/modules/convolution_variants_test.cpp.

Run once with PyTorch 1.13 (python3 tests/reference/make_convolution_reference.py >
tests/reference/ConvolutionReference.h); the test holds the printed numbers, not a dependency on PyTorch.
Inputs, weights, biases and gradOutputs are exact in float, closed formulas over flat row-major
indices i that the test computes as well: input[i] = ((5 i) % 17 - 8) / 8, weight[i] =
((3 i) % 7 - 3) / 4, bias[i] = ((2 i) % 5 - 2) / 2, gradOutput[i] = ((7 i) % 13 - 6) / 4; every
product and sum is then exact, in any order.
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


print("// PyTorch %s's dilated and transposed convolutions of the inputs described in"
      % torch.__version__.split("a")[0])
print("// tests/reference/make_convolution_reference.py, which wrote this file and says how. Do not edit.")
print("#pragma once\n\n#include <vector>\n\nnamespace nn::test {\n")
# SpatialDilatedConvolution(3, 4, kW 2, kH 3, dW 1, dH 2, padW 2, padH 1, dilW 3, dilH 2) on [2, 3, 7, 8].
print(reference("Dilated", (2, 3, 7, 8), (4, 3, 3, 2), 4,
                lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(2, 3))))
# SpatialFullConvolution(3, 2, kW 4, kH 3, dW 3, dH 2, padW 1, padH 1, adjW 2, adjH 1) on [2, 3, 4, 5].
print(reference("Full", (2, 3, 4, 5), (3, 2, 3, 4), 2,
                lambda x, w, b: F.conv_transpose2d(x, w, b, stride=(2, 3), padding=(1, 1), output_padding=(1, 2))))
print("}  // namespace nn::test")
