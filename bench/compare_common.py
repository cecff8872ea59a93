"""What tools/bench-lenet.sh (lenet_compare.py) and tools/bench-suite.sh (suite_compare.py) share:
measured runs of separate processes, DistributedDataParallel launches, the instruction-set
handling, the machine's sgemm rate and the lines that describe the machine and the run.

Each run is a separate process; its peak resident memory is the ru_maxrss that wait4 reports
for it (for DDP the sum over its two processes).
"""
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
SGEMM = os.path.join(ROOT, "bazel-bin", "bench", "sgemm_rate")

# The configurations: (title, key, threads per process, devices of this project).
CONFIGS = [
    ("1 thread", "1t", 1, "cpu:0"),
    ("2 threads", "2t", 2, "cpu:0"),
    ("2 devices x 1 thread", "dp", 1, "cpu:0,cpu:1"),
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


def fail(what, output):
    sys.stderr.write(f"{what} failed:\n{output[-3000:]}\n")
    sys.exit(1)


def run_json(cmd, metrics, env):
    """Runs cmd, which writes one JSON line to `metrics`; returns (that line, peak RSS in kB)."""
    status, rss, output = run_measured(cmd, env=env)
    if status != 0:
        fail(" ".join(cmd), output)
    with open(metrics) as f:
        return json.loads(f.read().splitlines()[-1]), rss


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ddp(command, work):
    """DistributedDataParallel: two processes of 1 thread, gloo over 127.0.0.1. command(rank,
    port, metrics) is one rank's command line; returns (rank 0's JSON line, the sum of the two
    peak RSS in kB)."""
    port = free_port()
    env = thread_env(1)
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    procs = []
    for rank in range(2):
        out = tempfile.TemporaryFile()
        metrics = os.path.join(work, f"torch-rank{rank}.json")
        procs.append((subprocess.Popen(command(rank, port, metrics), env=env, stdout=out, stderr=subprocess.STDOUT),
                      out, metrics))
    rss = 0
    for proc, out, _ in procs:
        status, peak = reap(proc)
        rss += peak
        if status != 0:
            out.seek(0)
            fail("DDP rank", out.read().decode(errors="replace"))
        out.close()
    with open(procs[0][2]) as f:
        return json.load(f), rss


def run_torch_config(base, config, work):
    """A PyTorch runner's command line `base` in configuration `config` ("1t", "2t" or "dp", of
    CONFIGS): returns (its JSON line, rank 0's for DDP; peak RSS in kB, summed for DDP)."""
    if config == "dp":
        return run_ddp(lambda rank, port, metrics: base + ["--threads", "1", "--rank", str(rank), "--world-size", "2",
                                                           "--port", str(port), "--metrics", metrics], work)
    threads = 1 if config == "1t" else 2
    metrics = os.path.join(work, "torch.json")
    return run_json(base + ["--threads", str(threads), "--metrics", metrics], metrics, thread_env(threads))


# OpenBLAS kernels that use AVX2 and FMA, no AVX-512.
AVX2_KERNELS = {"haswell", "zen"}


def isa_setup(program):
    """ISA=native (the default): both sides use every instruction set of the machine;
    NN_CPU_ISA, OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE leave the environment of every run, the
    sgemm rate's included, so that this project chooses its own and OpenBLAS's kernels for the
    CPU. ISA=same: each side runs what the environment gives it, and where NN_CPU_ISA holds this
    project to AVX2 (its own loops and OpenBLAS's kernels, nn::cpuInfo()) or OPENBLAS_CORETYPE
    holds OpenBLAS to AVX2 kernels, PyTorch's own kernels are held to AVX2 as well."""
    isa = os.environ.get("ISA", "native")
    if isa not in ("same", "native"):
        sys.exit(f"{program}: ISA must be 'native' or 'same', got '{isa}'")
    if isa == "native":
        for name in ("NN_CPU_ISA", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
            os.environ.pop(name, None)


def held_to_avx2():
    """Whether the environment holds this project to AVX2: NN_CPU_ISA at avx2 or generic (x86-64
    builds have AVX2 as their baseline), or OPENBLAS_CORETYPE naming AVX2 kernels."""
    return (os.environ.get("NN_CPU_ISA", "") in ("avx2", "generic")
            or os.environ.get("OPENBLAS_CORETYPE", "").lower() in AVX2_KERNELS)


def peer_isa_env():
    """PyTorch's instruction sets held to AVX2 (oneDNN, MKL, ATen's vectorised loops) where the
    environment holds this project to AVX2; nothing otherwise."""
    if not held_to_avx2():
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


def nn_env():
    """This project's runs: --threads gives each device its compute threads, which split the
    work; OpenBLAS runs one thread inside each part."""
    return dict(os.environ, OPENBLAS_NUM_THREADS="1")


def sgemm_rate(threads):
    """(median GFLOP/s, the name of OpenBLAS's kernels, the library's line on the CPU)"""
    out = json.loads(subprocess.run([SGEMM, str(threads)], check=True, capture_output=True, text=True).stdout)
    return out["gflops_median"], out["kernels"], out["cpu"]


class SgemmRates:
    """The sgemm rate on 1 and 2 threads, measured once per round, with the kernels that ran:
    OpenBLAS's, as this project's library loads it for the training runs."""

    def __init__(self):
        self.rates, self.kernels, self.cpu = {1: [], 2: []}, set(), set()

    def measure(self):
        for threads in (1, 2):
            rate, name, cpu = sgemm_rate(threads)
            self.rates[threads].append(rate)
            self.kernels.add(name)
            self.cpu.add(cpu)

    def median(self, config):
        """The median rate for a configuration's thread count (2 for two devices of 1 thread)."""
        return statistics.median(self.rates[1 if config == "1t" else 2])


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


def print_setup(sgemm, load_before, load_after):
    """The lines after a table's title: sgemm rates and kernels, DDP, instruction sets, load."""
    for line in sorted(sgemm.cpu):
        print(f"nn::cpuInfo(): {line}")
    print(f"sgemm (nn::blas::gemm, OpenBLAS's {'/'.join(sorted(sgemm.kernels))} kernels, 1024^3), median of "
          f"rounds: 1 thread {sgemm.median('1t'):.1f} GFLOP/s, 2 threads {sgemm.median('2t'):.1f} GFLOP/s")
    print("DDP: 2 processes x 1 thread, gloo on 127.0.0.1; its peak RSS is the sum of the two")
    if peer_isa_env():
        held = ", ".join(f"{name}={os.environ[name]}" for name in ("NN_CPU_ISA", "OPENBLAS_CORETYPE")
                         if os.environ.get(name))
        print(f"ISA=same: PyTorch held to AVX2 (DNNL_MAX_CPU_ISA, ATEN_CPU_CAPABILITY, MKL_ENABLE_INSTRUCTIONS), as "
              f"{held} holds this project; the default, ISA=native, frees both")
    else:
        print("PyTorch's kernels are not held back"
              + ("" if os.environ.get("ISA") == "same" else "; ISA=native: this project chooses its and OpenBLAS's "
                 "kernels for this CPU"))
    # Other work on the machine shows here first: the spread of each row widens with it.
    print("load average (1, 5, 15 min) before the rounds: {:.2f} {:.2f} {:.2f}, after: {:.2f} {:.2f} {:.2f}".format(
        *load_before, *load_after))


def add_torch_argument(parser):
    parser.add_argument("--torch", action="append", default=[], metavar="ORIGIN=PYTHON",
                        help="where a torch comes from (PyPI, Debian) and a Python that imports it; "
                             "the first is the peer the targets are checked against")


def start(program, args, run_rounds):
    """Checks that a PyTorch was given (--torch), sets the instruction sets up (isa_setup) and
    runs run_rounds(args, work) with a scratch folder `work`."""
    if not args.torch:
        sys.exit(f"{program}: no Python with torch given (--torch)")
    isa_setup(program)
    with tempfile.TemporaryDirectory(prefix=f"{program}-") as work:
        run_rounds(args, work)


def implementations(torch_specs):
    """The runs of a round from --torch ORIGIN=PYTHON arguments: ({name: origin}, [(name,
    python)]), this project first (named "nn", python None), then each torch as "torch0", ..."""
    origins = {f"torch{i}": spec.split("=", 1)[0] for i, spec in enumerate(torch_specs)}
    impls = [("nn", None)] + [(f"torch{i}", spec.split("=", 1)[1]) for i, spec in enumerate(torch_specs)]
    return origins, impls


def spread(values):
    return f"{statistics.median(values):6.0f} ({min(values):.0f}-{max(values):.0f})"


def noisy(*series):
    """A warning when the values of a measurement over the rounds differ by more than a quarter
    of their median."""
    for values in series:
        if max(values) - min(values) > 0.25 * statistics.median(values):
            return "\n  {:22s} UNRELIABLE: the runs differ by more than 25% of their median".format("")
    return ""
