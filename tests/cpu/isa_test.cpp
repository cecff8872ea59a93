// The CPU kernels' instruction-set level (nn/cpu/Isa.h): the machine's level against the CPU's
// flags as Linux lists them, NN_CPU_ISA's names, lowering it (never raising it), and the forms
// that widest() runs at each level giving the same floats.
#include "nn/cpu/Isa.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "nn/cpu/Routes.h"
#include "nn/modules/ReLU.h"
#include "nn/modules/SpatialBatchNormalization.h"
#include "nn/tensor/Error.h"
#include "tests/support/GradCheck.h"
#include "tests/support/Skip.h"

using nn::cpu::Isa;

namespace {

// The flags of the first processor in /proc/cpuinfo; empty where there is none (not Linux).
std::set<std::string> cpuFlags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      std::set<std::string> flags;
      for (std::string w; words >> w;) flags.insert(w);
      return flags;
    }
  return {};
}

// Restores the level a test changed.
struct IsaGuard {
  Isa previous = nn::cpu::isa();
  ~IsaGuard() { nn::cpu::setIsa(previous); }
};

}  // namespace

TEST_CASE("The machine's level follows the CPU's flags", "[isa]") {
  const std::set<std::string> flags = cpuFlags();
  if (flags.empty()) NN_SKIP("no /proc/cpuinfo to compare with");
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  const bool avx512 =
      flags.count("avx512f") && flags.count("avx512bw") && flags.count("avx512dq") && flags.count("avx512vl");
  CHECK(nn::cpu::machineIsa() == (avx512 ? Isa::avx512 : Isa::avx2));
  CHECK(flags.count("avx2") == 1);  // the build's baseline, which this process passed at load
  CHECK(flags.count("fma") == 1);
  CHECK(std::string(nn::cpu::missingBaseline()).empty());
#elif defined(__x86_64__)
  CHECK(nn::cpu::machineIsa() == Isa::avx2);  // Clang builds have no AVX-512 kernels
#else
  CHECK(nn::cpu::machineIsa() == Isa::generic);
#endif
}

TEST_CASE("NN_CPU_ISA names the levels, and another name is an error", "[isa]") {
  for (Isa level : {Isa::generic, Isa::avx2, Isa::avx512}) CHECK(nn::cpu::isaNamed(nn::cpu::isaName(level)) == level);
  CHECK(std::string(nn::cpu::isaName(Isa::avx2)) == "avx2");
  CHECK_THROWS_WITH(nn::cpu::isaNamed("AVX2"),
                    Catch::Contains("NN_CPU_ISA: expected one of generic, avx2, avx512, got 'AVX2'"));
  CHECK_THROWS_AS(nn::cpu::isaNamed("sse4"), nn::Error);
  // The run's level: NN_CPU_ISA's where set (the suite runs at each level with it), lowered to
  // the machine's.
  const char* asked = std::getenv("NN_CPU_ISA");
  const IsaGuard guard;
  nn::cpu::setIsa(asked && *asked ? nn::cpu::isaNamed(asked) : Isa::avx512);
  CHECK(nn::cpu::isa() == guard.previous);
}

TEST_CASE("setIsa lowers the level and never raises it above the machine's", "[isa]") {
  const IsaGuard guard;
  CHECK(nn::cpu::setIsa(Isa::generic) == guard.previous);
  CHECK(nn::cpu::isa() == Isa::generic);
  CHECK_FALSE(nn::cpu::isaAtLeast(Isa::avx2));
  CHECK(nn::cpu::isaAtLeast(Isa::generic));
  nn::cpu::setIsa(Isa::avx512);
  CHECK(nn::cpu::isa() == nn::cpu::machineIsa());
  nn::cpu::setIsa(Isa::avx2);
  CHECK(nn::cpu::isa() == (nn::cpu::machineIsa() == Isa::generic ? Isa::generic : Isa::avx2));
}

TEST_CASE("The loops of our own give the same floats at every level", "[isa]") {
  // Batch normalisation (sums over lanes of a fixed count) and ReLU, whose loops widest() runs
  // in their AVX-512 form at the level avx512 and in the baseline's below it.
  const IsaGuard guard;
  const nn::Tensor x = nn::test::randomTensor({3, 4, 9, 11}, 1);
  const nn::Tensor g = nn::test::randomTensor({3, 4, 9, 11}, 2);
  nn::SpatialBatchNormalization bn(4);
  nn::ReLU relu;
  std::vector<nn::Tensor> first;
  for (Isa level : {Isa::avx512, Isa::avx2, Isa::generic}) {
    CAPTURE(nn::cpu::isaName(level));
    nn::cpu::setIsa(level);
    // widest()'s AVX-512 form where the level in force is avx512, the baseline's otherwise.
    const bool wide = nn::cpu::isa() == Isa::avx512;
    const int64_t wideRan = nn::cpu::formCount(Isa::avx512), baselineRan = nn::cpu::formCount(Isa::generic);
    bn.zeroGradParameters();
    const nn::Tensor y = relu.forward(bn.forward(x)).clone();
    const nn::Tensor gi = bn.backward(x, relu.backward(bn.output, g)).clone();
    CHECK((nn::cpu::formCount(Isa::avx512) > wideRan) == wide);
    CHECK((nn::cpu::formCount(Isa::generic) > baselineRan) == !wide);
    const std::vector<nn::Tensor> results = {y, gi, bn.gradWeight.clone(), bn.gradBias.clone()};
    if (first.empty()) first = results;
    for (size_t i = 0; i < results.size(); ++i) CHECK(nn::test::maxAbsDiff(results[i], first[i]) == 0);
  }
}
