#!/usr/bin/env python3
"""PyTorch's side of tools/bench-lenet.sh: trains the LeNet of examples/LeNet.cpp as
examples/lenet does (Fashion-MNIST from the same IDX files, the same standardization, SGD
with momentum, weight decay and Torch7's learning rate decay, shuffled batches, one epoch of
the first N images) and writes one JSON line like the example's --metrics.

One process on T threads, or one rank of DistributedDataParallel over gloo on 127.0.0.1:
each rank then trains on its half of every global batch, as DataParallelTable's devices do.
"""
import argparse
import gzip
import os
import resource
import struct
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

from networks_torch import add_process_arguments, distributed, lenet, part, write_metrics


def read_idx(path):
    """An IDX file (gzip-compressed or plain) as a uint8 tensor of its sizes."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    dims = data[3]
    sizes = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]), dtype=torch.uint8).view(*sizes)


def load(folder, split):
    prefix = "train" if split == "train" else "t10k"

    def path(kind):
        name = os.path.join(folder, f"{prefix}-{kind}-idx{3 if kind == 'images' else 1}-ubyte")
        return name + ".gz" if os.path.exists(name + ".gz") else name

    images = read_idx(path("images")).unsqueeze(1).float().div_(255)
    images.sub_(0.2860).div_(0.3530)  # the example's standardize()
    labels = read_idx(path("labels")).long()
    return images, labels


def accuracy(model, images, labels):
    model.eval()
    correct = 0
    with torch.no_grad():
        for start in range(0, len(labels), 1000):
            out = model(images[start:start + 1000])
            correct += (out.argmax(1) == labels[start:start + 1000]).sum().item()
    model.train()
    return correct / len(labels)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch-size", type=int, default=256, help="global batch")
    p.add_argument("--limit", type=int, default=0, help="train on the first N images (all)")
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--lr-decay", type=float, default=2e-4)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--seed", type=int, default=1)
    add_process_arguments(p)
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    ddp = a.rank >= 0
    train_images, train_labels = load(a.data_dir, "train")
    test_images, test_labels = load(a.data_dir, "test")
    if a.limit > 0:
        train_images, train_labels = train_images[:a.limit], train_labels[:a.limit]
    model, rank, world = distributed(a, lenet())  # the same seed on every rank: the same parameters
    optimizer = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum, dampening=0,
                                weight_decay=a.weight_decay)
    # Torch7's decay, as nn::SGD: step k uses lr / (1 + k * decay).
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k: 1 / (1 + k * a.lr_decay))

    n = len(train_labels)
    order = torch.randperm(n, generator=torch.Generator().manual_seed(a.seed))
    # Each rank's part of a global batch, as DataParallelTable splits it (networks_torch.part).

    if ddp:
        dist.barrier()
    start = time.perf_counter()
    loss_sum, steps, seen = 0.0, 0, 0
    for begin in range(0, n, a.batch_size):
        batch = order[begin:begin + a.batch_size]
        first, length = part(len(batch), rank, world)
        mine = batch[first:first + length]
        x = train_images.index_select(0, mine)
        y = train_labels.index_select(0, mine)
        optimizer.zero_grad(set_to_none=False)
        loss = F.nll_loss(model(x), y)
        loss.backward()
        optimizer.step()
        schedule.step()
        loss_sum += loss.item()
        steps += 1
        seen += len(batch)
    if ddp:
        dist.barrier()
    elapsed = time.perf_counter() - start
    test_accuracy = accuracy(model.module if ddp else model, test_images, test_labels)
    if ddp:
        dist.destroy_process_group()

    line = {
        "train_loss": loss_sum / steps, "test_accuracy": test_accuracy, "seconds": elapsed,
        "images_per_second": seen / elapsed, "threads": a.threads, "batch_size": a.batch_size,
        "rank": rank, "world_size": world, "torch": torch.__version__,
        # ru_maxrss is in kilobytes on Linux
        "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
    write_metrics(line, a.metrics)


if __name__ == "__main__":
    main()
