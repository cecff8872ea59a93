#!/usr/bin/env python3
"""Runs tools/bench-suite.sh's rounds and prints its table: each network of the suite (LeNet, an
MLP, a VGG-style CNN with batch normalisation, the residual network of examples/resnet) trained
on synthetic data with this project (bench/train_synthetic) and with PyTorch
(bench/networks_torch.py), alternately, in each configuration (1 thread, 2 threads, 2 devices
or processes of 1 thread), and the machine's sgemm rate measured in the same run.
"""
import argparse
import datetime
import os
import statistics
import sys

from compare_common import (CONFIGS, HERE, ROOT, SgemmRates, add_torch_argument, cpu_name, implementations,
                            nn_env, noisy, print_setup, run_json, run_torch_config, spread, start)

TRAIN = os.path.join(ROOT, "bazel-bin", "bench", "train_synthetic")
TORCH_SCRIPT = os.path.join(HERE, "networks_torch.py")

# network: (timed steps of a run at batch 128, about 1 to 5 seconds of this project's training
# on one thread; the floor of its ratio to PyTorch)
NETWORKS = {
    "lenet": (60, 2.0),
    "mlp": (60, 1.5),
    "vgg": (12, 1.5),
    "resnet": (20, 1.5),
}


def run_nn(network, config, args, work):
    threads, devices = next((t, d) for _, c, t, d in CONFIGS if c == config)
    metrics = os.path.join(work, "nn.json")
    cmd = [TRAIN, "--network", network, "--batch-size", str(args.batch_size), "--steps", str(steps(network, args)),
           "--threads", str(threads), "--devices", devices, "--metrics", metrics]
    # autocast: the model's passes in an nn::Autocast scope of bfloat16, float32 products elsewhere.
    cmd += ["--autocast", "bf16"] if args.precision == "autocast" else ["--precision", args.precision]
    if args.no_amx:
        cmd.append("--no-amx")
    m, rss = run_json(cmd, metrics, nn_env())
    return {"ips": m["images_per_second"], "rss_kb": rss, "flop": flop_per_image(m), "kernel": m.get("bf16_kernel", "")}


def run_torch(python, network, config, args, work):
    base = [python, TORCH_SCRIPT, "--network", network, "--batch-size", str(args.batch_size), "--steps",
            str(steps(network, args))]
    if args.precision in ("medium", "autocast"):
        base += ["--autocast", "bfloat16"]
    m, rss = run_torch_config(base, config, work)
    return {"ips": m["images_per_second"], "rss_kb": rss, "version": m["torch"]}


def steps(network, args):
    return max(1, round(NETWORKS[network][0] * args.scale))


def flop_per_image(m):
    """Forward multiply-adds through the convolutions and Linear layers; backward twice those
    less the first layer's gradInput, which training does not need; 2 flops per multiply-add."""
    return 2 * (3 * m["forward_macs"] - m["first_layer_macs"])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--scale", type=float, default=1.0, help="multiplies every network's timed steps")
    p.add_argument("--networks", default=",".join(NETWORKS), help="comma-separated, of " + ", ".join(NETWORKS))
    p.add_argument("--precision", choices=["highest", "medium", "autocast"], default="highest",
                   help="medium: this project's float32 matmul precision medium (bfloat16 products) against "
                        "PyTorch's torch.autocast('cpu', dtype=torch.bfloat16); autocast: this project's "
                        "nn::Autocast of bfloat16 against the same")
    p.add_argument("--no-amx", action="store_true",
                   help="at medium, hold this project's bfloat16 products to vdpbf16ps on a CPU with AMX")
    p.add_argument("--configs", default=",".join(c for _, c, _, _ in CONFIGS),
                   help="comma-separated, of " + ", ".join(c for _, c, _, _ in CONFIGS))
    add_torch_argument(p)
    a = p.parse_args()
    a.networks = a.networks.split(",")
    a.configs = [entry for entry in CONFIGS if entry[1] in a.configs.split(",")]
    if not a.configs:
        sys.exit(f"suite_compare: no known configuration in --configs; expected some of "
                 f"{', '.join(c for _, c, _, _ in CONFIGS)}")
    unknown = [n for n in a.networks if n not in NETWORKS]
    if unknown:
        sys.exit(f"suite_compare: unknown network {', '.join(unknown)}; expected some of {', '.join(NETWORKS)}")
    start("suite_compare", a, run_rounds)


def run_rounds(a, work):
    origins, impls = implementations(a.torch)
    results = {(n, c, name): [] for n in a.networks for _, c, _, _ in a.configs for name, _ in impls}
    versions, sgemm = {}, SgemmRates()
    load_before = os.getloadavg()
    print(f"{a.rounds} rounds; each runs every network and configuration with this project, then with each "
          "PyTorch", file=sys.stderr)
    for r in range(1, a.rounds + 1):
        sgemm.measure()
        for network in a.networks:
            for _, config, _, _ in a.configs:
                for name, python in impls:
                    res = (run_nn(network, config, a, work) if python is None
                           else run_torch(python, network, config, a, work))
                    if "version" in res:
                        versions[name] = res["version"]
                    results[(network, config, name)].append(res)
                    print(f"round {r}  {network:6s} {config}  {name:7s} {res['ips']:7.0f} images/s  "
                          f"{res['rss_kb'] / 1024:6.0f} MB", file=sys.stderr)
    load_after = os.getloadavg()

    kernels = {x.get("kernel", "") for runs in results.values() for x in runs} - {""}
    products = f", {'/'.join(sorted(kernels))}" if a.precision != "highest" and kernels else ""

    def label(name, config):
        if name == "nn":
            return "nn DataParallelTable" + products if config == "dp" else f"nn (this project{products})"
        return f"PyTorch {versions[name].split('+')[0]} {origins[name]}" + (" DDP" if config == "dp" else "")

    print(f"Training on the CPU, synthetic data, {datetime.date.today()}: {cpu_name()}, {os.cpu_count()} cores")
    if a.precision == "medium":
        print("precision: this project at the float32 matmul precision medium (bfloat16 products, "
              "on the instructions the table names), PyTorch under torch.autocast('cpu', dtype=torch.bfloat16)")
    elif a.precision == "autocast":
        print("precision: this project under nn::Autocast(bfloat16) (bfloat16 products, on the instructions "
              "the table names), PyTorch under torch.autocast('cpu', dtype=torch.bfloat16)")
    print(f"batch {a.batch_size}, after 3 warm-up steps; {a.rounds} alternating rounds; images/s: median (min-max)")
    print_setup(sgemm, load_before, load_after)
    print()
    header = (f"{'network':8s} {'configuration':22s} {'implementation':26s} {'images/s':>20s} {'nn/this':>8s} "
              f"{'GFLOP/s':>8s} {'% sgemm':>8s} {'peak RSS MB':>12s}")
    print(header)
    print("-" * len(header))
    for network in a.networks:
        flop = results[(network, a.configs[0][1], "nn")][0]["flop"]
        for title, config, _, _ in a.configs:
            ours = statistics.median(x["ips"] for x in results[(network, config, "nn")])
            for i, (name, _) in enumerate(impls):
                runs = results[(network, config, name)]
                ips = [x["ips"] for x in runs]
                median = statistics.median(ips)
                gflops = flop * median / 1e9
                rss = statistics.median(x["rss_kb"] for x in runs) / 1024
                print(f"{network if i == 0 and config == a.configs[0][1] else '':8s} {title if i == 0 else '':22s} "
                      f"{label(name, config):26s} {spread(ips):>20s} {ours / median:7.2f}x {gflops:8.1f} "
                      f"{100 * gflops / sgemm.median(config):7.1f}% {rss:12.0f}")
        print(f"{'':8s} work per image: {flop / 1e6:.1f} MFLOP forward + backward")
    print()
    peer = "torch0"
    print(f"targets against {label(peer, '1t')}; each round's ratio beside the medians':")
    for network in a.networks:
        floor = NETWORKS[network][1]
        for title, config, _, _ in a.configs:
            ours = results[(network, config, "nn")]
            theirs = results[(network, config, peer)]
            ratio = statistics.median(x["ips"] for x in ours) / statistics.median(x["ips"] for x in theirs)
            rounds = " ".join(f"{x['ips'] / y['ips']:.2f}" for x, y in zip(ours, theirs))
            rss_ours = statistics.median(x["rss_kb"] for x in ours)
            rss_theirs = statistics.median(x["rss_kb"] for x in theirs)
            print(f"  {network:6s} {title:22s} speed {ratio:.2f}x (target {floor}x: "
                  f"{'met' if ratio >= floor else 'NOT met'}; rounds {rounds}); peak RSS {rss_ours / 1024:.0f} MB "
                  f"vs {rss_theirs / 1024:.0f} MB ({'met' if rss_ours <= rss_theirs else 'NOT met'})"
                  f"{noisy([x['ips'] for x in ours], [y['ips'] for y in theirs])}")


if __name__ == "__main__":
    main()
