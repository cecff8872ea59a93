#!/usr/bin/env python3
"""PyTorch's side of tools/bench-suite.sh: trains one network of the suite (bench/Networks.h) on
synthetic data as bench/train_synthetic does and writes the same JSON line.

A step: zero_grad, forward, nll_loss (read with .item()), backward, SGD (lr 0.01, momentum 0.9,
dampening 0, weight decay 5e-4), on eight fixed batches of normal noise with random labels
taken in turn. One process on T threads, or one rank of DistributedDataParallel over gloo on
127.0.0.1, each rank training on its part of every global batch as DataParallelTable's devices
do (sizes differing by at most one, the remainder to the first ranks).
"""
import argparse
import json
import resource
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


def lenet():
    """examples/LeNet.cpp's network; the ReLUs in place there too."""
    return nn.Sequential(
        nn.Conv2d(1, 20, 5), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
        nn.Conv2d(20, 50, 5), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
        nn.Flatten(),
        nn.Linear(800, 500), nn.ReLU(inplace=True),
        nn.Linear(500, 10), nn.LogSoftmax(dim=1))


def mlp():
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(784, 1024), nn.ReLU(inplace=True),
        nn.Linear(1024, 1024), nn.ReLU(inplace=True),
        nn.Linear(1024, 10), nn.LogSoftmax(dim=1))


def conv_bn_relu(planes_in, planes_out):
    return [nn.Conv2d(planes_in, planes_out, 3, padding=1), nn.BatchNorm2d(planes_out), nn.ReLU(inplace=True)]


def vgg():
    return nn.Sequential(
        *conv_bn_relu(3, 32), *conv_bn_relu(32, 32), nn.MaxPool2d(2, 2),
        *conv_bn_relu(32, 64), *conv_bn_relu(64, 64), nn.MaxPool2d(2, 2),
        nn.Flatten(), nn.Dropout(0.5),
        nn.Linear(64 * 8 * 8, 256), nn.ReLU(inplace=True),
        nn.Linear(256, 10), nn.LogSoftmax(dim=1))


class BasicBlock(nn.Module):
    """examples/ResNet.cpp's block: conv 3x3 (stride s), BN, ReLU, conv 3x3, BN, plus the
    shortcut (identity, or conv 1x1 of stride s and BN), then ReLU. The convolutions have a
    bias, as there (zeroed, trained)."""

    def __init__(self, planes_in, planes_out, stride):
        super().__init__()
        self.residual = nn.Sequential(
            nn.Conv2d(planes_in, planes_out, 3, stride, 1), nn.BatchNorm2d(planes_out), nn.ReLU(inplace=True),
            nn.Conv2d(planes_out, planes_out, 3, 1, 1), nn.BatchNorm2d(planes_out))
        if planes_in == planes_out and stride == 1:
            self.shortcut = nn.Identity()
        else:
            self.shortcut = nn.Sequential(nn.Conv2d(planes_in, planes_out, 1, stride), nn.BatchNorm2d(planes_out))

    def forward(self, x):
        return F.relu(self.residual(x) + self.shortcut(x), inplace=True)


def resnet():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
        BasicBlock(16, 32, 2), BasicBlock(32, 64, 2), BasicBlock(64, 64, 1),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10), nn.LogSoftmax(dim=1))


# name: (constructor, one sample's sizes)
NETWORKS = {
    "lenet": (lenet, (1, 28, 28)),
    "mlp": (mlp, (1, 28, 28)),
    "vgg": (vgg, (3, 32, 32)),
    "resnet": (resnet, (1, 28, 28)),
}


def part(length, rank, world):
    """This rank's [first, first + count) of a global batch of `length`."""
    base, extra = divmod(length, world)
    return rank * base + min(rank, extra), base + (1 if rank < extra else 0)


def add_process_arguments(p):
    """The arguments of one process of a run, shared with lenet_torch.py: its threads, its rank
    for DDP and where its JSON line goes."""
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads of each process")
    p.add_argument("--rank", type=int, default=-1, help="this process's rank for DDP (none: no DDP)")
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--port", type=int, default=29500, help="rendezvous port on 127.0.0.1")
    p.add_argument("--metrics", help="write the JSON line here too")


def distributed(a, model):
    """(model, rank, world size): `model` itself on one process, or wrapped in
    DistributedDataParallel over gloo on 127.0.0.1 where --rank is given."""
    if a.rank < 0:
        return model, 0, 1
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{a.port}", rank=a.rank, world_size=a.world_size)
    return nn.parallel.DistributedDataParallel(model), a.rank, a.world_size


def write_metrics(line, path):
    """Prints the run's JSON line, and writes it to `path` where one is given."""
    text = json.dumps(line)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
    print(text)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--network", choices=sorted(NETWORKS), required=True)
    p.add_argument("--batch-size", type=int, default=128, help="global batch")
    p.add_argument("--steps", type=int, default=20, help="timed steps")
    p.add_argument("--warmup", type=int, default=3, help="steps before the timed ones")
    p.add_argument("--autocast", choices=["none", "bfloat16"], default="none",
                   help="bfloat16: forward and loss under torch.autocast('cpu', dtype=torch.bfloat16)")
    add_process_arguments(p)
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    ddp = a.rank >= 0
    make, sample = NETWORKS[a.network]
    # The same seed on every rank: the same initial parameters.
    model, rank, world = distributed(a, make())
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, dampening=0, weight_decay=5e-4)

    data = torch.Generator().manual_seed(2 + rank)
    _, count = part(a.batch_size, rank, world)
    batches = [(torch.randn((count, *sample), generator=data), torch.randint(0, 10, (count,), generator=data))
               for _ in range(8)]

    loss_value = 0.0

    def step(k):
        nonlocal loss_value
        x, y = batches[k % len(batches)]
        optimizer.zero_grad(set_to_none=False)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.autocast == "bfloat16"):
            loss = F.nll_loss(model(x), y)
        loss.backward()
        optimizer.step()
        loss_value = loss.item()

    for k in range(a.warmup):
        step(k)
    if ddp:
        dist.barrier()
    start = time.perf_counter()
    for k in range(a.steps):
        step(a.warmup + k)
    if ddp:
        dist.barrier()
    elapsed = time.perf_counter() - start
    if ddp:
        dist.destroy_process_group()

    line = {
        "network": a.network, "images_per_second": a.steps * a.batch_size / elapsed, "loss": loss_value,
        "steps": a.steps, "batch_size": a.batch_size, "threads": a.threads, "rank": rank, "world_size": world,
        "torch": torch.__version__, "autocast": a.autocast,
        # ru_maxrss is in kilobytes on Linux
        "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
    write_metrics(line, a.metrics)


if __name__ == "__main__":
    main()
