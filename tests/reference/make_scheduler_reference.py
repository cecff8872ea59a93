"""Prints tests/reference/SchedulerReference.h: the learning rate of PyTorch's schedulers at each step, for
tests/optim/scheduler_test.cpp.

Run with the newest torch from PyPI (python tests/reference/make_scheduler_reference.py >
tests/reference/SchedulerReference.h, in the virtual environment of tools/bench-peers.sh); the test holds
the printed numbers, not a dependency on PyTorch. Each schedule runs on SGD at learning rate 0.1
(OneCycleLR sets its own), stepped 40 times; ReduceLROnPlateau is given the metrics below.
"""
import math
import warnings

import torch

STEPS = 40
BASE = 0.1
# A metric that falls, stalls, falls a little (less than the threshold), then falls again.
METRICS = [1.0 - 0.05 * k if k < 8 else (0.6 - 1e-6 * k if k < 20 else 0.5 - 0.01 * (k - 20)) for k in range(STEPS)]


def rates(make, metrics=None):
    """The rate after construction, then after each of STEPS steps."""
    parameter = torch.zeros(1, requires_grad=True)
    optimizer = torch.optim.SGD([parameter], lr=BASE, momentum=0.9)
    schedule = make(optimizer)
    out = [optimizer.param_groups[0]["lr"]]
    for k in range(STEPS):
        optimizer.step()
        if metrics is None:
            schedule.step()
        else:
            schedule.step(metrics[k])
        out.append(optimizer.param_groups[0]["lr"])
    return out


def sequential(optimizer):
    warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=5)
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=30, eta_min=1e-3)
    return torch.optim.lr_scheduler.SequentialLR(optimizer, [warmup, cosine], milestones=[5])


lrs = torch.optim.lr_scheduler
SCHEDULES = [
    ("kStepLR", lambda o: lrs.StepLR(o, step_size=7, gamma=0.5)),
    ("kMultiStepLR", lambda o: lrs.MultiStepLR(o, milestones=[3, 10, 10, 25], gamma=0.3)),
    ("kExponentialLR", lambda o: lrs.ExponentialLR(o, gamma=0.93)),
    ("kLinearLR", lambda o: lrs.LinearLR(o, start_factor=0.25, end_factor=0.75, total_iters=12)),
    ("kCosineAnnealingLR", lambda o: lrs.CosineAnnealingLR(o, T_max=16, eta_min=0.002)),
    ("kWarmupCosine", sequential),
    ("kOneCycleLR", lambda o: lrs.OneCycleLR(o, max_lr=0.8, total_steps=STEPS, pct_start=0.25,
                                              cycle_momentum=False)),
]


def table(name, values):
    return "inline const std::vector<double> %s{%s};\n" % (name, ", ".join("%.17g" % v for v in values))


def main():
    warnings.simplefilter("ignore")  # PyTorch's notes on the order of optimizer.step and scheduler.step
    print("// PyTorch %s's learning-rate schedulers on SGD at 0.1, %d steps: written by" % (torch.__version__, STEPS))
    print("// tests/reference/make_scheduler_reference.py, which says how. Do not edit.")
    print("#pragma once\n\n#include <vector>\n\nnamespace nn::test {\n")
    print(table("kPlateauMetrics", METRICS))
    for name, make in SCHEDULES:
        print(table(name, rates(make)))
    plateau = lambda o: lrs.ReduceLROnPlateau(o, factor=0.5, patience=3, threshold=1e-4, cooldown=2, min_lr=0.01)
    print(table("kReduceLROnPlateau", rates(plateau, METRICS)))
    print("}  // namespace nn::test")


if __name__ == "__main__":
    main()
