// The CPU's vendor, model and vector features from CPUID (CpuFeatures.h).
#include "nn/cpu/CpuFeatures.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace nn::cpu {

namespace {

#if defined(__x86_64__)

struct Registers {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

// Leaf `leaf`, sub-leaf `sub`; zeros where the CPU has no such leaf.
Registers cpuid(unsigned leaf, unsigned sub = 0) {
  Registers r;
  if (!__get_cpuid_count(leaf, sub, &r.eax, &r.ebx, &r.ecx, &r.edx)) return Registers{};
  return r;
}

bool bit(unsigned value, int position) { return (value >> position) & 1u; }

// The register states the OS saves on a context switch (XCR0); 0 where it does not say (no OSXSAVE).
uint64_t savedStates(const Registers& leaf1) {
  if (!bit(leaf1.ecx, 27)) return 0;
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

CpuFeatures read() {
  CpuFeatures cpu;
  const Registers leaf0 = cpuid(0);
  char vendor[13] = {};
  std::memcpy(vendor, &leaf0.ebx, 4);
  std::memcpy(vendor + 4, &leaf0.edx, 4);
  std::memcpy(vendor + 8, &leaf0.ecx, 4);
  cpu.vendor = std::strcmp(vendor, "GenuineIntel") == 0   ? Vendor::intel
               : std::strcmp(vendor, "AuthenticAMD") == 0 ? Vendor::amd
               : std::strcmp(vendor, "HygonGenuine") == 0 ? Vendor::hygon
                                                          : Vendor::other;
  const Registers leaf1 = cpuid(1);
  const int baseFamily = static_cast<int>((leaf1.eax >> 8) & 0xf);
  const int baseModel = static_cast<int>((leaf1.eax >> 4) & 0xf);
  cpu.family = baseFamily == 0xf ? baseFamily + static_cast<int>((leaf1.eax >> 20) & 0xff) : baseFamily;
  cpu.model =
      baseFamily == 0x6 || baseFamily == 0xf ? baseModel + (static_cast<int>((leaf1.eax >> 16) & 0xf) << 4) : baseModel;
  const uint64_t states = savedStates(leaf1);
  const bool ymm = (states & 0x6) == 0x6;            // SSE and AVX state
  const bool zmm = ymm && (states & 0xe0) == 0xe0;   // opmask, upper ZMM0-15, ZMM16-31
  const bool tiles = (states & 0x60000) == 0x60000;  // XTILECFG and XTILEDATA
  const Registers leaf7 = leaf0.eax >= 7 ? cpuid(7) : Registers{};
  const Registers leaf7s1 = leaf0.eax >= 7 && leaf7.eax >= 1 ? cpuid(7, 1) : Registers{};
  cpu.avx2 = ymm && bit(leaf1.ecx, 28) && bit(leaf1.ecx, 12) && bit(leaf7.ebx, 5);  // AVX, FMA, AVX2
  cpu.avx512 = cpu.avx2 && zmm && bit(leaf7.ebx, 16) && bit(leaf7.ebx, 17) && bit(leaf7.ebx, 30) &&
               bit(leaf7.ebx, 31);  // F, DQ, BW, VL
  cpu.avx512bf16 = cpu.avx512 && bit(leaf7s1.eax, 5);
  cpu.amxBf16 = tiles && bit(leaf7.edx, 22) && bit(leaf7.edx, 24);  // AMX-BF16, AMX-TILE
  return cpu;
}

std::string brandString() {
  if (cpuid(0x80000000).eax < 0x80000004) return "";
  char brand[49] = {};
  for (unsigned i = 0; i < 3; ++i) {
    const Registers r = cpuid(0x80000002 + i);
    std::memcpy(brand + 16 * i, &r.eax, 4);
    std::memcpy(brand + 16 * i + 4, &r.ebx, 4);
    std::memcpy(brand + 16 * i + 8, &r.ecx, 4);
    std::memcpy(brand + 16 * i + 12, &r.edx, 4);
  }
  std::string name(brand);
  const size_t first = name.find_first_not_of(' ');
  const size_t last = name.find_last_not_of(' ');
  return first == std::string::npos ? "" : name.substr(first, last - first + 1);
}

#else

CpuFeatures read() { return CpuFeatures{}; }

// /proc/cpuinfo's model name, or on ARM its implementer and part numbers.
std::string brandString() {
  std::ifstream in("/proc/cpuinfo");
  std::string implementer, part;
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (line.rfind("model name", 0) == 0) return value;
    if (line.rfind("CPU implementer", 0) == 0 && implementer.empty()) implementer = value;
    if (line.rfind("CPU part", 0) == 0 && part.empty()) part = value;
  }
  return implementer.empty() ? "" : "CPU implementer " + implementer + " part " + part;
}

#endif

}  // namespace

const CpuFeatures& cpuFeatures() {
  static const CpuFeatures features = read();
  return features;
}

Isa featureLevel(const CpuFeatures& cpu) { return cpu.avx512 ? Isa::avx512 : cpu.avx2 ? Isa::avx2 : Isa::generic; }

std::string cpuModelName() {
  static const std::string name = [] {
    std::string brand = brandString();
    if (brand.empty()) brand = "unknown CPU";
    const CpuFeatures& cpu = cpuFeatures();
    if (cpu.family == 0) return brand;
    std::ostringstream s;
    s << brand << " (family " << cpu.family << ", model " << cpu.model << ")";
    return s.str();
  }();
  return name;
}

std::string featureNames(const CpuFeatures& cpu) {
  std::string names;
  const auto add = [&names](bool has, const char* name) {
    if (!has) return;
    if (!names.empty()) names += ", ";
    names += name;
  };
  add(cpu.avx2, "AVX2");
  add(cpu.avx512, "AVX-512");
  add(cpu.avx512bf16, "AVX512-BF16");
  add(cpu.amxBf16, "AMX-BF16");
  return names;
}

}  // namespace nn::cpu
