"""Prints tests/reference/ResamplingReference.h: PyTorch's outputs and input gradients of
adaptive_avg_pool2d (to 3x4, to 1x1 and to 7x9, larger than the input) of a [2, 2, 5, 7] input,
and of nearest up-sampling by 2 and 3 of a [1, 2, 3, 4] input, for tests/modules/resampling_test.cpp.

Run once with PyTorch 1.13 (python3 tests/reference/make_resampling_reference.py >
tests/reference/ResamplingReference.h); the test holds the printed numbers, not a dependency on PyTorch.
Inputs and gradOutputs are exact in float, closed formulas over flat row-major indices i that
the test computes as well: input[i] = ((5 i) % 17 - 8) / 8, gradOutput[i] = ((7 i) % 13 - 6) / 4.
"""

import torch
import torch.nn.functional as F
from reference_tools import formula, block_table as table


def reference(name, sizes, f):
    x = formula(lambda i: ((5 * i) % 17 - 8) / 8, sizes).requires_grad_()
    y = f(x)
    g = formula(lambda i: ((7 * i) % 13 - 6) / 4, tuple(y.shape))
    (grad,) = torch.autograd.grad(y, x, g)
    return table("kTorch%s" % name, y) + table("kTorch%sGradInput" % name, grad)


print("// PyTorch %s's adaptive average pooling and nearest up-sampling of the inputs described in"
      % torch.__version__.split("a")[0])
print("// tests/reference/make_resampling_reference.py, which wrote this file and says how. Do not edit.")
print("#pragma once\n\n#include <vector>\n\nnamespace nn::test {\n")
POOLED = (2, 2, 5, 7)
print(reference("Adaptive3x4", POOLED, lambda x: F.adaptive_avg_pool2d(x, (3, 4))))
print(reference("Adaptive1x1", POOLED, lambda x: F.adaptive_avg_pool2d(x, (1, 1))))
print(reference("Adaptive7x9", POOLED, lambda x: F.adaptive_avg_pool2d(x, (7, 9))))
UPSAMPLED = (1, 2, 3, 4)
print(reference("Nearest2", UPSAMPLED, lambda x: F.interpolate(x, scale_factor=2, mode="nearest")))
print(reference("Nearest3", UPSAMPLED, lambda x: F.interpolate(x, scale_factor=3, mode="nearest")))
print("}  // namespace nn::test")
