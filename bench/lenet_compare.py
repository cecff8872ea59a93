#!/usr/bin/env python3
"""Runs tools/bench-lenet.sh's rounds and prints its table: LeNet training with this project
and with PyTorch, alternately, in each configuration (1 thread, 2 threads, 2 devices or
processes of 1 thread, and 2 processes of 1 thread under mpirun against DDP's 2), and the
machine's sgemm rate measured in the same run.

Images/s are those of the training pass as each program measures it: examples/lenet's
--metrics, bench/lenet_torch.py's JSON line.
"""
import argparse
import datetime
import os
import shutil
import statistics
import sys

from compare_common import (CONFIGS, HERE, ROOT, SgemmRates, add_torch_argument, cpu_name, implementations,
                            nn_env, noisy, print_setup, run_json, run_torch_config, spread, start)

LENET = os.path.join(ROOT, "bazel-bin", "examples", "lenet")
TORCH_SCRIPT = os.path.join(HERE, "lenet_torch.py")

# LeNet's multiply-adds per image in the forward pass, from its layer shapes.
CONV1 = 20 * 24 * 24 * (1 * 5 * 5)    # conv 1->20 5x5 on 28x28: 20 planes of 24x24
CONV2 = 50 * 8 * 8 * (20 * 5 * 5)     # conv 20->50 5x5 on 12x12: 50 planes of 8x8
FC1 = 800 * 500
FC2 = 500 * 10
FORWARD_MACS = CONV1 + CONV2 + FC1 + FC2
# Backward: gradInput and gradWeight each cost a forward's multiply-adds, except the first
# layer's gradInput, which training does not need. 2 flops per multiply-add.
FLOP_PER_IMAGE = 2 * (3 * FORWARD_MACS - CONV1)

# The shared configurations, and where mpirun is found, 2 processes of 1 thread each
# (DistributedDataParallelTable, each its half of the batch) against PyTorch's DDP over gloo.
MPI = ("2 processes x 1 thread", "mpi", 1, "cpu:0")
LENET_CONFIGS = CONFIGS + ([MPI] if shutil.which("mpirun") else [])


def mpirun(processes):
    command = ["mpirun", "-np", str(processes), "--oversubscribe", "--bind-to", "none"]
    return command + (["--allow-run-as-root"] if os.geteuid() == 0 else [])

def run_nn(config, args, work):
    threads, devices = next((t, d) for _, c, t, d in LENET_CONFIGS if c == config)
    metrics = os.path.join(work, "nn.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    # Under mpirun, --batch-size is each process's, and rank 0 writes the metrics.
    batch = args.batch_size // 2 if config == "mpi" else args.batch_size
    cmd = (mpirun(2) if config == "mpi" else []) + [
        LENET, "--epochs", "1", "--batch-size", str(batch), "--threads", str(threads),
        "--limit", str(args.limit), "--devices", devices, "--metrics", metrics]
    m, rss = run_json(cmd, metrics, nn_env())
    return {"ips": m["images_per_second"], "rss_kb": rss, "accuracy": m["test_accuracy"]}


def run_torch(python, config, args, work):
    base = [python, TORCH_SCRIPT, "--batch-size", str(args.batch_size), "--limit", str(args.limit)]
    m, rss = run_torch_config(base, "dp" if config == "mpi" else config, work)
    return {"ips": m["images_per_second"], "rss_kb": rss, "accuracy": m["test_accuracy"], "version": m["torch"]}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--limit", type=int, default=15360, help="training images per run")
    p.add_argument("--batch-size", type=int, default=256)
    add_torch_argument(p)
    a = p.parse_args()
    start("lenet_compare", a, run_rounds)


def run_rounds(a, work):
    origins, impls = implementations(a.torch)
    results = {(c, name): [] for _, c, _, _ in LENET_CONFIGS for name, _ in impls}
    versions, sgemm = {}, SgemmRates()
    load_before = os.getloadavg()
    print(f"{a.rounds} rounds; each runs every configuration with this project, then with each PyTorch",
          file=sys.stderr)
    for r in range(1, a.rounds + 1):
        sgemm.measure()
        for _, config, _, _ in LENET_CONFIGS:
            for name, python in impls:
                res = run_nn(config, a, work) if python is None else run_torch(python, config, a, work)
                if "version" in res:
                    versions[name] = res["version"]
                results[(config, name)].append(res)
                print(f"round {r}  {config}  {name:7s} {res['ips']:7.0f} images/s  "
                      f"{res['rss_kb'] / 1024:6.0f} MB", file=sys.stderr)

    def label(name, config):
        if name == "nn":
            return {"dp": "nn DataParallelTable", "mpi": "nn DistributedDataParallelT."}.get(config,
                                                                                          "nn (this project)")
        return f"PyTorch {versions[name].split('+')[0]} {origins[name]}" + (" DDP" if config in ("dp", "mpi") else "")

    load_after = os.getloadavg()
    rate = {c: sgemm.median(c) for _, c, _, _ in LENET_CONFIGS}
    print(f"LeNet training on the CPU, {datetime.date.today()}: {cpu_name()}, {os.cpu_count()} cores")
    print(f"batch {a.batch_size}, 1 epoch of the first {a.limit} Fashion-MNIST images per run, "
          f"{a.rounds} alternating rounds; images/s: median (min-max)")
    print(f"work per image: {FLOP_PER_IMAGE / 1e6:.2f} MFLOP forward + backward "
          f"(2 x (3 x {FORWARD_MACS / 1e6:.3f} M multiply-adds - conv1's gradInput {CONV1 / 1e6:.3f} M))")
    print_setup(sgemm, load_before, load_after)
    print()
    header = f"{'configuration':22s} {'implementation':26s} {'images/s':>20s} {'nn/this':>8s} " \
             f"{'GFLOP/s':>8s} {'% sgemm':>8s} {'peak RSS MB':>12s} {'test acc':>9s}"
    print(header)
    print("-" * len(header))
    for title, config, _, _ in LENET_CONFIGS:
        ours = statistics.median(x["ips"] for x in results[(config, "nn")])
        for i, (name, _) in enumerate(impls):
            runs = results[(config, name)]
            ips = [x["ips"] for x in runs]
            median = statistics.median(ips)
            gflops = FLOP_PER_IMAGE * median / 1e9
            rss = statistics.median(x["rss_kb"] for x in runs) / 1024
            accuracy = statistics.median(x["accuracy"] for x in runs)
            ratio = f"{ours / median:7.2f}x"
            print(f"{title if i == 0 else '':22s} {label(name, config):26s} {spread(ips):>20s} {ratio:>8s} "
                  f"{gflops:8.1f} {100 * gflops / rate[config]:7.1f}% {rss:12.0f} {accuracy:9.4f}")
    print()
    peer = "torch0"
    print(f"targets against {label(peer, '1t')}; each round's ratio beside the medians' "
          "(a round's two runs are seconds apart, so other work on the machine disturbs it less):")
    for title, config, _, _ in LENET_CONFIGS:
        ours = results[(config, "nn")]
        theirs = results[(config, peer)]
        ratio = statistics.median(x["ips"] for x in ours) / statistics.median(x["ips"] for x in theirs)
        rounds = " ".join(f"{x['ips'] / y['ips']:.2f}" for x, y in zip(ours, theirs))
        rss_ours = statistics.median(x["rss_kb"] for x in ours)
        rss_theirs = statistics.median(x["rss_kb"] for x in theirs)
        print(f"  {title:22s} speed {ratio:.2f}x (target 2.0x: {'met' if ratio >= 2.0 else 'NOT met'}; "
              f"rounds {rounds}){noisy([x['ips'] for x in ours], [y['ips'] for y in theirs])}")
        print(f"  {'':22s} peak RSS {rss_ours / 1024:.0f} MB vs {rss_theirs / 1024:.0f} MB "
              f"({'met' if rss_ours <= rss_theirs else 'NOT met'})")
    if ("mpi", "nn") in results:
        mpi = statistics.median(x["ips"] for x in results[("mpi", "nn")])
        single = statistics.median(x["ips"] for x in results[("1t", "nn")])
        print(f"  2 processes under mpirun against this project's 1 thread: {mpi / single:.2f}x "
              f"(target 1.8x: {'met' if mpi / single >= 1.8 else 'NOT met'})")
    ours = results[("2t", "nn")]
    share = 100 * FLOP_PER_IMAGE * statistics.median(x["ips"] for x in ours) / 1e9 / rate["2t"]
    print(f"  2 threads: {share:.1f}% of the sgemm rate (target 45%: {'met' if share >= 45 else 'NOT met'})"
          f"{noisy([x['ips'] for x in ours], sgemm.rates[2])}")


if __name__ == "__main__":
    main()
