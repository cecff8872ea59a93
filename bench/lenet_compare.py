#!/usr/bin/env python3
"""Runs tools/bench-lenet.sh's rounds and prints its table: LeNet training with this project
and with PyTorch, alternately, in each configuration (1 thread, 2 threads, 2 devices or
processes of 1 thread), and the machine's sgemm rate measured in the same run.

Each run is a separate process; its peak resident memory is the ru_maxrss that wait4 reports
for it (for DDP the sum over its two processes). Images/s are those of the training pass as
each program measures it: examples/lenet's --metrics, bench/lenet_torch.py's JSON line.
"""
import argparse
import datetime
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LENET = os.path.join(ROOT, "bazel-bin", "examples", "lenet")
SGEMM = os.path.join(ROOT, "bazel-bin", "bench", "sgemm_rate")
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

CONFIGS = [
    ("1 thread", "1t"),
    ("2 threads", "2t"),
    ("2 devices x 1 thread", "dp"),
]


def reap(proc):
    """Waits for a started process; returns (exit status, its peak RSS in kB)."""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped: Popen must not wait again
    return proc.returncode, usage.ru_maxrss


def run_measured(cmd, env=None):
    """Runs cmd to its end; returns (exit status, peak RSS in kB, output)."""
    with tempfile.TemporaryFile() as out:
        status, rss = reap(subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT))
        out.seek(0)
        return status, rss, out.read().decode(errors="replace")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# OpenBLAS kernels that use AVX2 and FMA, no AVX-512.
AVX2_KERNELS = {"haswell", "zen"}


def isa_setup():
    """ISA=same (the default): each side runs the instructions the environment gives it, and
    where OPENBLAS_CORETYPE holds OpenBLAS (this project's GEMMs) to AVX2 kernels, PyTorch's
    own kernels are held to AVX2 as well. ISA=native: both sides use every instruction set of
    the machine; OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE leave the environment of every run,
    the sgemm rate's included."""
    isa = os.environ.get("ISA", "same")
    if isa not in ("same", "native"):
        sys.exit(f"lenet_compare: ISA must be 'same' or 'native', got '{isa}'")
    if isa == "native":
        os.environ.pop("OPENBLAS_CORETYPE", None)
        os.environ.pop("OPENBLAS_L2_SIZE", None)


def peer_isa_env():
    """PyTorch's instruction sets held to AVX2 (oneDNN, MKL, ATen's vectorised loops) where
    OPENBLAS_CORETYPE holds this project's GEMMs to AVX2; nothing otherwise."""
    if os.environ.get("OPENBLAS_CORETYPE", "").lower() not in AVX2_KERNELS:
        return {}
    return dict(DNNL_MAX_CPU_ISA="AVX2", ONEDNN_MAX_CPU_ISA="AVX2", ATEN_CPU_CAPABILITY="avx2",
                MKL_ENABLE_INSTRUCTIONS="AVX2")


def thread_env(threads):
    """PyTorch's best settings: its intra-op threads, and BLAS libraries that do not add their
    own threads on top (OpenBLAS for Debian's build; MKL follows torch.set_num_threads); its
    instruction set as peer_isa_env says."""
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.update(peer_isa_env())
    return env


def fail(what, output):
    sys.stderr.write(f"{what} failed:\n{output[-3000:]}\n")
    sys.exit(1)


def run_nn(config, args, work):
    metrics = os.path.join(work, "nn.jsonl")
    threads, devices = {"1t": (1, "cpu:0"), "2t": (2, "cpu:0"), "dp": (1, "cpu:0,cpu:1")}[config]
    cmd = [LENET, "--epochs", "1", "--batch-size", str(args.batch_size), "--threads", str(threads),
           "--limit", str(args.limit), "--devices", devices, "--metrics", metrics]
    # --threads gives each device its compute threads, which split the work; OpenBLAS runs one
    # thread inside each part.
    status, rss, output = run_measured(cmd, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    if status != 0:
        fail(" ".join(cmd), output)
    with open(metrics) as f:
        m = json.loads(f.read().splitlines()[-1])
    return {"ips": m["images_per_second"], "rss_kb": rss, "accuracy": m["test_accuracy"]}


def run_torch(python, config, args, work):
    base = [python, TORCH_SCRIPT, "--batch-size", str(args.batch_size), "--limit", str(args.limit)]
    if config != "dp":
        threads = 1 if config == "1t" else 2
        metrics = os.path.join(work, "torch.json")
        status, rss, output = run_measured(base + ["--threads", str(threads), "--metrics", metrics],
                                           env=thread_env(threads))
        if status != 0:
            fail(python + " " + TORCH_SCRIPT, output)
        with open(metrics) as f:
            m = json.load(f)
        return {"ips": m["images_per_second"], "rss_kb": rss, "accuracy": m["test_accuracy"],
                "version": m["torch"]}
    # DistributedDataParallel: two processes of 1 thread, gloo over 127.0.0.1.
    port = free_port()
    env = thread_env(1)
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    procs = []
    for rank in range(2):
        out = tempfile.TemporaryFile()
        metrics = os.path.join(work, f"torch-rank{rank}.json")
        cmd = base + ["--threads", "1", "--rank", str(rank), "--world-size", "2", "--port", str(port),
                      "--metrics", metrics]
        procs.append((subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT), out, metrics))
    rss = 0
    for proc, out, _ in procs:
        status, peak = reap(proc)
        rss += peak
        if status != 0:
            out.seek(0)
            fail("DDP rank", out.read().decode(errors="replace"))
        out.close()
    with open(procs[0][2]) as f:
        m = json.load(f)
    return {"ips": m["images_per_second"], "rss_kb": rss, "accuracy": m["test_accuracy"], "version": m["torch"]}


def sgemm_rate(threads):
    """(median GFLOP/s, the name of OpenBLAS's kernels)"""
    out = json.loads(subprocess.run([SGEMM, str(threads)], check=True, capture_output=True, text=True).stdout)
    return out["gflops_median"], out["kernels"]


def cpu_name():
    """The model name, family and model numbers and vector extensions /proc/cpuinfo gives."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return platform.processor() or "unknown CPU"
    flags = fields.get("flags", "").split()
    vector = [name for flag, name in (("avx2", "AVX2"), ("fma", "FMA"), ("avx512f", "AVX-512")) if flag in flags]
    return (f"{fields.get('model name', 'unknown CPU')} (family {fields.get('cpu family', '?')}, "
            f"model {fields.get('model', '?')}; {', '.join(vector) or 'no AVX2'})")


def spread(values):
    return f"{statistics.median(values):6.0f} ({min(values):.0f}-{max(values):.0f})"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--limit", type=int, default=15360, help="training images per run")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--torch", action="append", default=[], metavar="ORIGIN=PYTHON",
                   help="where a torch comes from (PyPI, Debian) and a Python that imports it; "
                        "the first is the peer the targets are checked against")
    a = p.parse_args()
    if not a.torch:
        sys.exit("lenet_compare: no Python with torch given (--torch)")

    isa_setup()
    with tempfile.TemporaryDirectory(prefix="bench-lenet-") as work:
        run_rounds(a, work)


def run_rounds(a, work):
    origins = {f"torch{i}": spec.split("=", 1)[0] for i, spec in enumerate(a.torch)}
    impls = [("nn", None)] + [(f"torch{i}", spec.split("=", 1)[1]) for i, spec in enumerate(a.torch)]
    results = {(c, name): [] for _, c in CONFIGS for name, _ in impls}
    versions, sgemm, kernels = {}, {1: [], 2: []}, set()
    load_before = os.getloadavg()
    print(f"{a.rounds} rounds; each runs every configuration with this project, then with each PyTorch",
          file=sys.stderr)
    for r in range(1, a.rounds + 1):
        for threads in (1, 2):
            rate, name = sgemm_rate(threads)
            sgemm[threads].append(rate)
            kernels.add(name)
        for _, config in CONFIGS:
            for name, python in impls:
                res = run_nn(config, a, work) if python is None else run_torch(python, config, a, work)
                if "version" in res:
                    versions[name] = res["version"]
                results[(config, name)].append(res)
                print(f"round {r}  {config}  {name:7s} {res['ips']:7.0f} images/s  "
                      f"{res['rss_kb'] / 1024:6.0f} MB", file=sys.stderr)

    def label(name, config):
        if name == "nn":
            return "nn DataParallelTable" if config == "dp" else "nn (this project)"
        return f"PyTorch {versions[name].split('+')[0]} {origins[name]}" + (" DDP" if config == "dp" else "")

    load_after = os.getloadavg()
    rate = {c: statistics.median(sgemm[1 if c == "1t" else 2]) for _, c in CONFIGS}
    print(f"LeNet training on the CPU, {datetime.date.today()}: {cpu_name()}, {os.cpu_count()} cores")
    print(f"batch {a.batch_size}, 1 epoch of the first {a.limit} Fashion-MNIST images per run, "
          f"{a.rounds} alternating rounds; images/s: median (min-max)")
    print(f"work per image: {FLOP_PER_IMAGE / 1e6:.2f} MFLOP forward + backward "
          f"(2 x (3 x {FORWARD_MACS / 1e6:.3f} M multiply-adds - conv1's gradInput {CONV1 / 1e6:.3f} M))")
    print(f"sgemm (nn::blas::gemm, OpenBLAS's {'/'.join(sorted(kernels))} kernels, 1024^3), median of rounds: "
          f"1 thread {rate['1t']:.1f} GFLOP/s, 2 threads {rate['2t']:.1f} GFLOP/s")
    print("DDP: 2 processes x 1 thread, gloo on 127.0.0.1; its peak RSS is the sum of the two")
    if peer_isa_env():
        print(f"PyTorch held to AVX2 (DNNL_MAX_CPU_ISA, ATEN_CPU_CAPABILITY, MKL_ENABLE_INSTRUCTIONS), as "
              f"OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} holds this project's GEMMs; "
              f"ISA=native frees both")
    else:
        print("PyTorch's kernels are not held back"
              + ("; ISA=native: OpenBLAS picks its kernels for this CPU" if os.environ.get("ISA") == "native" else ""))
    # Other work on the machine shows here first: the spread of each row widens with it.
    print("load average (1, 5, 15 min) before the rounds: {:.2f} {:.2f} {:.2f}, after: {:.2f} {:.2f} {:.2f}".format(
        *load_before, *load_after))
    print()
    header = f"{'configuration':22s} {'implementation':26s} {'images/s':>20s} {'nn/this':>8s} " \
             f"{'GFLOP/s':>8s} {'% sgemm':>8s} {'peak RSS MB':>12s} {'test acc':>9s}"
    print(header)
    print("-" * len(header))
    for title, config in CONFIGS:
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
    for title, config in CONFIGS:
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
    ours = results[("2t", "nn")]
    share = 100 * FLOP_PER_IMAGE * statistics.median(x["ips"] for x in ours) / 1e9 / rate["2t"]
    print(f"  2 threads: {share:.1f}% of the sgemm rate (target 45%: {'met' if share >= 45 else 'NOT met'})"
          f"{noisy([x['ips'] for x in ours], sgemm[2])}")


def noisy(*series):
    """A warning when the values of a measurement over the rounds differ by more than a quarter
    of their median."""
    for values in series:
        if max(values) - min(values) > 0.25 * statistics.median(values):
            return "\n  {:22s} UNRELIABLE: the runs differ by more than 25% of their median".format("")
    return ""


if __name__ == "__main__":
    main()
