"""Prints tests/reference/LookupReference.h: PyTorch's embedding of [2, 5] indices from 0 (some repeated)
into a [6, 3] weight, and the weight's gradient, for tests/modules/lookup_table_test.cpp.

Run once with PyTorch 1.13 (python3 tests/reference/make_lookup_reference.py > tests/reference/LookupReference.h);
the test holds the printed numbers, not a dependency on PyTorch. The weight and gradOutput are
exact in float, closed formulas over flat row-major indices i that the test computes as well:
weight[i] = ((3 i) % 7 - 3) / 4, gradOutput[i] = ((7 i) % 13 - 6) / 4.
"""

import torch
import torch.nn.functional as F
from reference_tools import formula, line_table as table

INDICES = [[0, 4, 2, 4, 5], [1, 4, 0, 3, 4]]


w = formula(lambda i: ((3 * i) % 7 - 3) / 4, (6, 3)).requires_grad_()
index = torch.tensor(INDICES)
y = F.embedding(index, w)
g = formula(lambda i: ((7 * i) % 13 - 6) / 4, tuple(y.shape))
(gw,) = torch.autograd.grad(y, w, g)
print("// PyTorch %s's embedding of the indices below and its weight's gradient: written by"
      % torch.__version__.split("a")[0])
print("// tests/reference/make_lookup_reference.py, which says how. Do not edit.")
print("#pragma once\n\n#include <vector>\n\nnamespace nn::test {\n")
print(table("kLookupIndices", sum(INDICES, [])))
print(table("kTorchLookup", y.detach().reshape(-1).tolist()))
print(table("kTorchLookupGradWeight", gw.reshape(-1).tolist()))
print("}  // namespace nn::test")
