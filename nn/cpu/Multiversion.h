// NN_CPU_CLONES: a hot loop of our own compiled twice, for AVX-512 (x86-64-v4) and for the
// build's baseline (x86-64-v3: AVX2 and FMA, tools/bazel/copts.bzl), one of which the dynamic
// loader picks for the machine (GCC's target_clones, an ifunc): the widest vectors of the
// machine serve our loops, not only OpenBLAS's GEMMs. Both give the same floats: nothing is
// contracted into a fused multiply-add (-ffp-contract=off, tools/bazel/copts.bzl) and
// reductions add a fixed number of lanes. Compiled once: off x86; by Clang 14 (the fuzz build),
// which clones no function templates; and under ThreadSanitizer, whose instrumentation of the
// resolver runs before its runtime is ready when the program loads, and crashes it.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define NN_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "default")))
#else
#define NN_CPU_CLONES
#endif

// NN_CPU_INLINE: a helper (a function template, a lambda) whose loops run inside an
// NN_CPU_CLONES function. Only the marked function is cloned: a helper GCC does not inline is
// compiled once, for the baseline, and the AVX-512 clone calls that copy (batch normalisation's
// sums ran AVX2 code so). Always inlined, the helper becomes part of each clone.
#if defined(__GNUC__)
#define NN_CPU_INLINE __attribute__((always_inline))
#else
#define NN_CPU_INLINE
#endif
