"""Compiler options of the project's own targets: language, optimisation, instruction set, warnings.

They live in the targets rather than in .bazelrc, so that a build of the library from another
workspace (tools/bazel/deps.bzl) compiles it as the project's own build does, in Bazel's default
mode (fastbuild) and with nothing in that workspace's .bazelrc.
"""

NN_COPTS = [
    # The toolchain Bazel configures passes -std=c++0x; the later flag wins.
    "-std=c++17",
    "-Wall",
    "-Wextra",
    "-Werror",
    # g++ contracts a * b + c into one fused multiply-add where the target has FMA
    # (x86-64-v3 below, and every aarch64 CPU). Off, so that each NN_HD formula rounds after
    # every operation, as nvcc's device code does with --fmad=false (cuda.bzl): the CPU and the
    # GPU then give the same floats for the same formula.
    "-ffp-contract=off",
] + select({
    # Optimised in every compilation mode: fastbuild would otherwise give an -O0 library, about
    # four times slower (-c opt adds -O2 as well, with NDEBUG: the code has no assert). Under
    # AddressSanitizer and UBSan (--config=asan), -O1: GCC 12 takes a third of the time on the
    # unrolled kernel tiles (DirectConvolution.cpp: 213 s at -O2, 70 s at -O1).
    str(Label("//tools/bazel:sanitized")): ["-O1"],
    "//conditions:default": ["-O2"],
}) + select({
    # The instruction set, by the target CPU. aarch64 (--cpu=aarch64: an ARM machine's own
    # build, or the cross build of --config=aarch64): ARMv8.0-A, which every 64-bit ARM CPU runs
    # (Graviton, Ampere, Raspberry Pi 4), NEON included; OpenBLAS picks its kernels for the CPU
    # when it loads, and our AVX clones and intrinsics are compiled on x86-64 only.
    str(Label("//tools/bazel:aarch64")): ["-march=armv8-a"],
    # x86-64: AVX2 and FMA; the hottest loops are also built for AVX-512 and chosen when the
    # program loads.
    "//conditions:default": ["-march=x86-64-v3"],
})

# Speed flags of GCC, which clang (the fuzz build, --config=fuzz) does not know: at -O2,
# GCC 12 vectorises only loops that need no run-time check (its "very cheap" model), which
# leaves out the element-wise loops of ReLU, SGD and the like: their pointers might alias.
# These two let it version such loops and hoist invariant branches out of them. Neither
# reorders arithmetic, so the floats do not change. Add to copts beside NN_COPTS.
NN_GCC_COPTS = select({
    # Through Label: this repository's setting, in whichever repository the BUILD file using it is.
    str(Label("//tools/bazel:clang")): [],
    "//conditions:default": [
        "-fvect-cost-model=dynamic",
        "-funswitch-loops",
    ],
})
