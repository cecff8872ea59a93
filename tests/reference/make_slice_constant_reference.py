"""Prints tests/reference/SliceConstantReference.h: PyTorch's outputs and input gradients of narrow, select,
transposes, zero padding (and cropping), multiplication by a constant and addition of a
constant, for tests/tensor/narrow_test.cpp, tests/transpose_test.cpp and tests/modules/constant_test.cpp.

Run once with PyTorch 1.13 (python3 tests/reference/make_slice_constant_reference.py >
tests/reference/SliceConstantReference.h); the test holds the printed numbers, not a dependency on
PyTorch. The input is [2, 3, 4] and each gradOutput has its output's sizes; both are closed
formulas the tests compute as well, over flat row-major indices i:
  input[i] = 5 sin(0.37 i), gradOutput[i] = cos(0.11 i).
Torch7's negative offsets and lengths, which PyTorch's narrow lacks, are resolved here by hand:
nn.Narrow(2, -3, -1) of a size-4 dimension is narrow(2, 1, 3), nn.Select(0, -1) is select(0, 1).
The input is a [C, H, W] = [2, 3, 4] input to the padding, whose counts are (left, right, top,
bottom) as ZeroPad2d's and Torch7's; negative counts crop.
"""
import math

import torch
from reference_tools import formula, block_table as table

SIZES = (2, 3, 4)


def reference(name, f):
    x = formula(lambda i: 5 * math.sin(0.37 * i), SIZES).requires_grad_()
    y = f(x)
    g = formula(lambda i: math.cos(0.11 * i), tuple(y.shape))
    (grad,) = torch.autograd.grad(y, x, g)
    return table("kTorch%s" % name, y) + "\n" + table("kTorch%sGradInput" % name, grad)


print("// PyTorch %s's narrow, select, transpose, pad, x * 0.3 and x + 0.7 of a [2, 3, 4] input, and"
      % torch.__version__.split("a")[0])
print("// their input gradients: written by tests/reference/make_slice_constant_reference.py, which says how. Do not edit.")
print("#pragma once\n\n#include <vector>\n\nnamespace nn::test {\n")
print(reference("Narrow1", lambda x: x.narrow(1, 1, 2)))
print(reference("Narrow2", lambda x: x.narrow(2, 1, 3)))
print(reference("Select0", lambda x: x.select(0, 1)))
print(reference("Transpose", lambda x: x.transpose(0, 2).transpose(1, 2)))
print(reference("Pad", lambda x: torch.nn.functional.pad(x, (1, 2, 0, 1))))
print(reference("Crop", lambda x: torch.nn.functional.pad(x, (-1, 1, 2, -1))))
print(reference("MulConstant", lambda x: x * 0.3))
print(reference("AddConstant", lambda x: x + 0.7))
print("}  // namespace nn::test")
