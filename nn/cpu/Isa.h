// The instruction-set level of the CPU kernels of our own: which of their forms run (AVX-512,
// AVX2 + FMA, or none: OpenBLAS and compiler-vectorised loops at the build's baseline, as on
// aarch64). The machine decides, once; NN_CPU_ISA (or setIsa, for tests) lowers it, as PyTorch's
// ATEN_CPU_CAPABILITY and oneDNN's ONEDNN_MAX_CPU_ISA do, so that one AVX-512 machine runs the
// routes and promises of an AVX2 one, and the generic routes of an ARM server.
#pragma once

namespace nn::cpu {

/// The levels, each running the forms of those below it. x86-64 builds require AVX2 and FMA
/// (x86-64-v3), so there `generic` runs AVX2 code too, only none of our own kernels.
enum class Isa { generic = 0, avx2 = 1, avx512 = 2 };

/// Whether the kernels use `level`'s forms: isa() is `level` or above.
bool isaAtLeast(Isa level);

/// "generic", "avx2", "avx512"
const char* isaName(Isa level);

/// The level named "generic", "avx2" or "avx512"; another name is an nn::Error naming NN_CPU_ISA.
Isa isaNamed(const char* name);

/// The highest level this machine runs and this build compiled: avx512 where the CPU has
/// AVX-512 (F, BW, DQ, VL) and the build (GCC on x86-64) has its kernels; avx2 on other x86-64
/// CPUs; generic elsewhere.
Isa machineIsa();

/// The level the kernels use: machineIsa(), at most NN_CPU_ISA's level where that is set (one of
/// "generic", "avx2", "avx512", read once; another value is an nn::Error at the first use), or
/// setIsa's. NN_CPU_ISA also holds OpenBLAS's kernels to its level (Blas.h), setIsa does not.
Isa isa();

/// Sets the level for the whole process (at most machineIsa(): a higher one is lowered to it)
/// and returns the previous one. For tests and benchmarks, between passes, not during one.
Isa setIsa(Isa level);

/// Where the CPU lacks what the build requires (x86-64: AVX2 and FMA), the message a program
/// built with the library prints before it stops, at load time, instead of dying of an illegal
/// instruction; empty otherwise.
const char* missingBaseline();

}  // namespace nn::cpu
