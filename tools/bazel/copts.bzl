"""Compiler options for the project's own code: warnings are errors."""

NN_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    # g++ contracts a * b + c into one fused multiply-add where the target has FMA
    # (-march=x86-64-v3 in .bazelrc). Off, so that each NN_HD formula rounds after every
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
    "//tools/bazel:clang": [],
    "//conditions:default": [
        "-fvect-cost-model=dynamic",
        "-funswitch-loops",
    ],
})
