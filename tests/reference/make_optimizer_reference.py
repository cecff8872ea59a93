"""Prints tests/reference/OptimizerReference.h: the parameters after each of 5 steps of PyTorch's Adam,
AdamW, Adagrad and RMSprop, and of Torch7's optim.adam written in PyTorch's tensor operations,
from the parameters and gradients below, for tests/optim/optimizer_test.cpp.

Run with PyTorch (python3 tests/reference/make_optimizer_reference.py > tests/reference/OptimizerReference.h); the
test holds the printed numbers, not a dependency on PyTorch. A zero gradient (element 0 of step 0)
and a large one (element 5) are among the gradients. PyTorch 1.13 printed the file without the
AdamW tables, which PyTorch 2.15 printed and were added to it, its other lines kept: 2.15's Adam
updates m with lerp_ rather than 1.13's mul_ and add_, and rounds the last bit of a few elements
otherwise (within the tests' 2 ulps).
"""
import math

import torch
from reference_tools import line_table as table

X0 = [0.5, -1.25, 2, 0, 3.5, -0.75, 1, 0.25]
STEPS = 5
GRADIENTS = [[round(math.sin(0.7 * i + 1.3 * k) * (1 + i % 3), 4) for i in range(len(X0))] for k in range(STEPS)]
GRADIENTS[0][0] = 0.0
for k in range(STEPS):
    GRADIENTS[k][5] *= 100


def run(name, make):
    """The parameters after each step of the optimizer make(params) returns."""
    x = torch.tensor(X0, dtype=torch.float32, requires_grad=True)
    optimizer = make([x])
    after = []
    for k in range(STEPS):
        x.grad = torch.tensor(GRADIENTS[k], dtype=torch.float32)
        optimizer.step()
        after += x.detach().tolist()
    return table("kTorch%s" % name, after)


def torch7_adam(lr, lrd, beta1, beta2, eps, wd):
    """optim.adam of Torch7, line for line, in float32 tensors and double (Lua) numbers."""
    x = torch.tensor(X0, dtype=torch.float32)
    m = torch.zeros_like(x)
    v = torch.zeros_like(x)
    after = []
    for t in range(STEPS):
        dfdx = torch.tensor(GRADIENTS[t], dtype=torch.float32)
        if wd != 0:
            dfdx = dfdx.add(x, alpha=wd)
        clr = lr / (1 + t * lrd)
        m.mul_(beta1).add_(dfdx, alpha=1 - beta1)
        v.mul_(beta2).addcmul_(dfdx, dfdx, value=1 - beta2)
        denom = v.sqrt().add_(eps)
        step_size = clr * math.sqrt(1 - beta2 ** (t + 1)) / (1 - beta1 ** (t + 1))
        x.addcdiv_(m, denom, value=-step_size)
        after += x.tolist()
    return after


print("// PyTorch %s's Adam, AdamW, Adagrad and RMSprop, and Torch7's optim.adam in PyTorch's operations,"
      % torch.__version__.split("a")[0])
print("// over 5 steps: written by tests/reference/make_optimizer_reference.py, which says how. Do not edit.")
print("#pragma once\n\n#include <vector>\n\nnamespace nn::test {\n")
print(table("kOptimizerX0", X0) + table("kOptimizerGradients", sum(GRADIENTS, [])))
print(run("Adam", lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)))
print(run("AdamEps", lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.8, 0.99), eps=1e-3)))
print(table("kTorch7Adam", torch7_adam(0.01, 0.1, 0.8, 0.99, 1e-3, 0.01)))
print(run("AdamW", lambda p: torch.optim.AdamW(p)))
print(run("AdamWDecay", lambda p: torch.optim.AdamW(p, lr=0.05, betas=(0.8, 0.99), eps=1e-3, weight_decay=0.5)))
print(run("Adagrad", lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.05, weight_decay=0.01, eps=1e-10)))
print(run("RMSprop", lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.9, eps=1e-8, weight_decay=0.01)))
print("}  // namespace nn::test")
