"""Prints tests/reference/CriterionReference.h: PyTorch's losses (mean and sum) and input gradients of
mse_loss, l1_loss, smooth_l1_loss, kl_div, binary_cross_entropy (with and without weights) and
multi_margin_loss (p 1 and 2, margins, weights) for tests/criterions/pointwise_criterion_test.cpp and
tests/criterions/multi_margin_test.cpp.

Run once with PyTorch 1.13 (python3 tests/reference/make_criterion_reference.py >
tests/reference/CriterionReference.h); the test holds the printed numbers, not a dependency on PyTorch.
The inputs sit on the kinks too: equal input and target (Abs), |input - target| = 1 (SmoothL1),
target 0 (DistKLDiv), input 0 and 1 (BCE), a margin met exactly (MultiMargin).
"""
import torch
import torch.nn.functional as F
from reference_tools import literal, line_table as table

# [3, 4] inputs and targets of the point-wise losses; differences 0, +-0.25, +-1, +-2.5, ...
X = [0.5, -1.25, 2, 0, 3.5, -0.75, 1, 0.25, -2, 1.5, -0.5, 4]
T = [0.5, -1, 1, 2.5, 1, -0.75, 1.25, -0.75, -1.5, 0, 0.5, 4.5]
# DistKLDiv: log-probabilities and probabilities, some 0.
LOGP = [-0.5, -1.25, -2, -3, -0.25, -4, -1, -0.75, -1.5, -2.5, -0.125, -6]
P = [0.25, 0, 0.5, 0.25, 0.125, 0.375, 0, 0.5, 1, 0, 0, 0]
# BCE: probabilities in [0, 1] with the ends, targets in [0, 1], weights over the last dimension.
PROB = [0.5, 0.125, 0.875, 0, 1, 0.25, 0.75, 0.0625, 0.9375, 0.375, 0.625, 1]
LABEL = [1, 0, 1, 0, 1, 0.25, 0.5, 1, 0, 0.75, 1, 0]
BCE_WEIGHTS = [0.5, 2, 1, 1.5]
# MultiMargin: [3, 5] scores, a class target per row, a weight per class. Row 1 meets the
# margin exactly for class 3 (margin - x_y + x_j = 0).
SCORES = [0.5, -1, 2, 0.25, 1.5, 3, 1, -0.5, 2, 0, -0.25, 0.75, 1.25, -1.5, 0.5]
CLASSES = [2, 0, 4]
MARGIN_WEIGHTS = [1, 0.5, 2, 1.5, 0.25]


def scalar(name, value):
    return "inline constexpr float %s = %s;\n" % (name, literal(value))


def reference(name, f, x, t, shape):
    """The loss averaged and summed, and the averaged and summed input gradients."""
    text = ""
    for reduction, suffix in (("mean", "Mean"), ("sum", "Sum")):
        xt = torch.tensor(x, dtype=torch.float32).reshape(shape).requires_grad_()
        loss = f(xt, t, reduction)
        (grad,) = torch.autograd.grad(loss, xt)
        text += scalar("kTorch%s%s" % (name, suffix), loss.item())
        text += table("kTorch%s%sGradInput" % (name, suffix), grad.flatten().tolist())
    return text


def f32(values, shape=None):
    t = torch.tensor(values, dtype=torch.float32)
    return t if shape is None else t.reshape(shape)


print("// PyTorch %s's point-wise losses and multi_margin_loss of the inputs below, and their input"
      % torch.__version__.split("a")[0])
print("// gradients: written by tests/reference/make_criterion_reference.py, which says how. Do not edit.")
print("#pragma once\n\n#include <vector>\n\nnamespace nn::test {\n")
print(table("kLossX", X) + table("kLossT", T) + table("kLossLogP", LOGP) + table("kLossP", P) +
      table("kLossProb", PROB) + table("kLossLabel", LABEL) + table("kLossBceWeights", BCE_WEIGHTS) +
      table("kLossScores", SCORES) + table("kLossClasses", CLASSES) + table("kLossMarginWeights", MARGIN_WEIGHTS))
S = [3, 4]
print(reference("Mse", lambda x, t, r: F.mse_loss(x, t, reduction=r), X, f32(T, S), S))
print(reference("Abs", lambda x, t, r: F.l1_loss(x, t, reduction=r), X, f32(T, S), S))
print(reference("SmoothL1", lambda x, t, r: F.smooth_l1_loss(x, t, reduction=r), X, f32(T, S), S))
# Torch7's DistKLDivCriterion averages over elements: PyTorch's reduction 'mean', not 'batchmean'.
print(reference("DistKLDiv", lambda x, t, r: F.kl_div(x, t, reduction=r), LOGP, f32(P, S), S))
print(reference("Bce", lambda x, t, r: F.binary_cross_entropy(x, t, reduction=r), PROB, f32(LABEL, S), S))
print(reference("BceWeighted", lambda x, t, r: F.binary_cross_entropy(
    x, t, weight=f32(BCE_WEIGHTS).expand(3, 4), reduction=r), PROB, f32(LABEL, S), S))
M = [3, 5]
y = torch.tensor(CLASSES, dtype=torch.int64)
print(reference("MultiMarginP1", lambda x, t, r: F.multi_margin_loss(x, t, reduction=r), SCORES, y, M))
print(reference("MultiMarginP2", lambda x, t, r: F.multi_margin_loss(x, t, p=2, margin=0.5, reduction=r),
                SCORES, y, M))
print(reference("MultiMarginWeighted", lambda x, t, r: F.multi_margin_loss(
    x, t, weight=f32(MARGIN_WEIGHTS), margin=2, reduction=r), SCORES, y, M))
print("}  // namespace nn::test")
