"""Compiler options of the project's own targets: language, optimisation, instruction set, warnings.

They live in the targets rather than in .bazelrc, so that a build of the library from another
workspace (tools/bazel/deps.bzl) compiles it as the project's own build does, in Bazel's default
mode (fastbuild) and with nothing in that workspace's .bazelrc.
"""

NN_COPTS = [
    # The toolchain Bazel configures passes -std=c++0x; the later flag wins.
    "-std=c++17",
    # Optimised in every compilation mode: fastbuild would otherwise give an -O0 library, about
    # four times slower. -c opt adds -O2 as well, with NDEBUG (the code has no assert).
    "-O2",
    # AVX2 and FMA; the hottest loops are also built for AVX-512 and chosen when the program loads.
    "-march=x86-64-v3",
    "-Wall",
    "-Wextra",
    "-Werror",
    # g++ contracts a * b + c into one fused multiply-add where the target has FMA
    # (-march=x86-64-v3 above). Off, so that each NN_HD formula rounds after every
    # operation, as nvcc's device code does with --fmad=false (cuda.bzl): the CPU and the
    # GPU then give the same floats for the same formula.
    "-ffp-contract=off",
]

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
