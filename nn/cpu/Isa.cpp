// The instruction-set level of the CPU kernels (Isa.h), and the load-time check of the build's
// baseline.
#include "nn/cpu/Isa.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "nn/cpu/Avx512.h"
#include "nn/cpu/CpuFeatures.h"
#include "nn/tensor/Error.h"

namespace nn::cpu {

namespace {

Isa lowered(Isa level) { return static_cast<int>(level) < static_cast<int>(machineIsa()) ? level : machineIsa(); }

// The level in force; -1 until the first use reads NN_CPU_ISA.
std::atomic<int> current{-1};

}  // namespace

const char* isaName(Isa level) {
  switch (level) {
    case Isa::avx512:
      return "avx512";
    case Isa::avx2:
      return "avx2";
    default:
      return "generic";
  }
}

Isa isaNamed(const char* name) {
  for (Isa level : {Isa::generic, Isa::avx2, Isa::avx512})
    if (std::strcmp(name, isaName(level)) == 0) return level;
  NN_CHECK(false, "NN_CPU_ISA: expected one of generic, avx2, avx512, got '" << name << "'");
  return Isa::generic;
}

Isa machineIsa() {
#if defined(__x86_64__)
  return NN_AVX512 && cpuFeatures().avx512 ? Isa::avx512 : Isa::avx2;
#else
  return Isa::generic;
#endif
}

Isa isa() {
  int level = current.load(std::memory_order_relaxed);
  if (level < 0) {
    const char* asked = std::getenv("NN_CPU_ISA");
    level = static_cast<int>(asked && *asked ? lowered(isaNamed(asked)) : machineIsa());
    int unset = -1;
    if (!current.compare_exchange_strong(unset, level, std::memory_order_relaxed)) level = unset;
  }
  return static_cast<Isa>(level);
}

bool isaAtLeast(Isa level) { return static_cast<int>(isa()) >= static_cast<int>(level); }

Isa setIsa(Isa level) {
  const Isa previous = isa();
  current.store(static_cast<int>(lowered(level)), std::memory_order_relaxed);
  return previous;
}

// Compiled for the plain x86-64 instruction set, so that it runs on any x86-64 CPU: everything
// else of the library may use AVX2 and FMA (tools/bazel/copts.bzl).
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("arch=x86-64"))) const char* missingBaseline() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "";
  return "nn: this CPU lacks AVX2 or FMA, which this build of the library requires (x86-64-v3: Intel Haswell of "
         "2013 or later, AMD Excavator of 2015 or later)\n";
}

namespace {

// Runs before the program's other constructors (priority 101, the first for programs), so
// before any AVX2 code of the library, and stops the program with the message.
__attribute__((constructor(101), target("arch=x86-64"))) void checkBaseline() {
  const char* message = missingBaseline();
  if (*message == '\0') return;
  if (write(STDERR_FILENO, message, std::strlen(message)) < 0) _exit(70);
  _exit(70);
}

}  // namespace
#else
const char* missingBaseline() { return ""; }
#endif

}  // namespace nn::cpu
