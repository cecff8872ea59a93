// What the CPU is: its vendor, model and the vector instructions the library and its BLAS choose
// their kernels by, read from CPUID with the operating system's part checked (a CPU can have
// AVX-512 that the kernel does not save). Features, never a list of models, decide.
#pragma once

#include <string>

#include "nn/cpu/Isa.h"

namespace nn::cpu {

enum class Vendor { intel, amd, hygon, other };

struct CpuFeatures {
  Vendor vendor = Vendor::other;
  /// CPUID's display family and model (family 25 model 17: AMD Zen 4); 0 off x86-64.
  int family = 0;
  int model = 0;
  /// AVX2 and FMA, with the OS saving the YMM registers.
  bool avx2 = false;
  /// AVX-512 F, BW, DQ and VL, with the OS saving the ZMM and mask registers.
  bool avx512 = false;
  /// AVX-512's bfloat16 products (vdpbf16ps): Cooper Lake, Sapphire Rapids and later Xeons, Zen 4.
  bool avx512bf16 = false;
  /// AMX tiles with bfloat16 products, with the OS saving the tile state (Sapphire Rapids on).
  bool amxBf16 = false;
};

/// This machine's, read once.
const CpuFeatures& cpuFeatures();

/// The highest level (Isa.h) whose instructions `cpu` has: avx512, avx2, or generic (x86-64
/// without AVX2, or another architecture). Unlike machineIsa() it does not ask whether this build
/// compiled the library's AVX-512 kernels.
Isa featureLevel(const CpuFeatures& cpu);

/// The CPU's name as it gives it ("AMD EPYC 9R14 96-Core Processor", CPUID's brand string; off
/// x86-64, /proc/cpuinfo's model name or CPU part), with family and model where known.
std::string cpuModelName();

/// The features the library uses, named: "AVX2, AVX-512, AVX512-BF16"; empty where it has none.
std::string featureNames(const CpuFeatures& cpu);

}  // namespace nn::cpu
