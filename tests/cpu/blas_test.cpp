// OpenBLAS's kernels (nn/cpu/Blas.h, Note [Choosing OpenBLAS's kernels]): the choice from a CPU's
// features for the x86-64 CPUs of the last ten years, those newer than Debian 12's OpenBLAS among
// them; the warning where the kernels that run are below the CPU's level; and on this machine,
// in this process and in child processes with NN_CPU_ISA and OPENBLAS_CORETYPE set, the kernels
// that run and the environment left behind.
#include "nn/cpu/Blas.h"

#include <strings.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "nn/cpu/CpuFeatures.h"
#include "nn/runtime/ComputeThreads.h"
#include "tests/support/ExampleRun.h"
#include "tests/support/Skip.h"

using Catch::Matchers::Contains;
using nn::cpu::CpuFeatures;
using nn::cpu::Isa;
using nn::cpu::Vendor;

namespace {

CpuFeatures features(Vendor vendor, bool avx2, bool avx512, bool bf16, bool amx) {
  CpuFeatures cpu;
  cpu.vendor = vendor;
  cpu.family = avx2 ? 6 : 0;
  cpu.avx2 = avx2;
  cpu.avx512 = avx512;
  cpu.avx512bf16 = bf16;
  cpu.amxBf16 = amx;
  return cpu;
}

std::string asked(const CpuFeatures& cpu, Isa level) {
  const char* name = nn::blas::kernelsFor(cpu, level);
  return name ? name : "(OpenBLAS's own)";
}

// Whether `program` is on the PATH.
bool onPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string folders = path ? path : "";
  for (size_t begin = 0; begin <= folders.size();) {
    size_t end = folders.find(':', begin);
    if (end == std::string::npos) end = folders.size();
    if (access((folders.substr(begin, end - begin) + "/" + program).c_str(), X_OK) == 0) return true;
    begin = end + 1;
  }
  return false;
}

int rank(Isa level) { return static_cast<int>(level); }

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// This test binary run again as a child, with the environment changed by `env` arguments and
// under `runner` where given (an emulator), running the hidden case below alone.
nn::test::ExampleResult runChild(const std::vector<std::string>& environment,
                                 const std::vector<std::string>& runner = {}) {
  char self[PATH_MAX] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  REQUIRE(length > 0);
  std::vector<std::string> command{"env", "-u", "OPENBLAS_CORETYPE", "-u", "NN_CPU_ISA"};
  command.insert(command.end(), environment.begin(), environment.end());
  command.insert(command.end(), runner.begin(), runner.end());
  command.insert(command.end(), {std::string(self, static_cast<size_t>(length)), "[.blas-child]"});
  nn::test::ExampleResult run = nn::test::runCommand(command, {}, 120);
  INFO(run.stdoutText << run.stderrText);
  REQUIRE(run.exitStatus == 0);
  return run;
}

}  // namespace

TEST_CASE("OpenBLAS's kernels are chosen by the CPU's features, on CPUs newer than OpenBLAS's table too", "[blas]") {
  struct Cpu {
    const char* name;
    CpuFeatures features;
    const char* atAvx512;  // the kernels at the CPU's own level
    const char* atAvx2;    // with NN_CPU_ISA=avx2 (and generic: the x86-64 build's baseline is AVX2)
  };
  const Vendor intel = Vendor::intel, amd = Vendor::amd;
  const std::vector<Cpu> cpus = {
      {"Intel Skylake, Kaby Lake, Coffee Lake (2015-2019)", features(intel, true, false, false, false), "Haswell",
       "Haswell"},
      {"Intel Skylake-SP, Cascade Lake (2017-2019)", features(intel, true, true, false, false), "SkylakeX", "Haswell"},
      {"Intel Cooper Lake (2020)", features(intel, true, true, true, false), "Cooperlake", "Haswell"},
      {"Intel Ice Lake-SP (2021)", features(intel, true, true, false, false), "SkylakeX", "Haswell"},
      {"Intel Alder Lake, Raptor Lake, Arrow Lake (2021-2024)", features(intel, true, false, false, false), "Haswell",
       "Haswell"},
      {"Intel Sapphire Rapids (2023)", features(intel, true, true, true, true), "Cooperlake", "Haswell"},
      // Family 6 model 207: Debian 12's OpenBLAS (0.3.21) gives it its SSE3 kernels, Prescott.
      {"Intel Emerald Rapids (2023)", features(intel, true, true, true, true), "Cooperlake", "Haswell"},
      {"Intel Granite Rapids (2024)", features(intel, true, true, true, true), "Cooperlake", "Haswell"},
      {"AMD Zen, Zen 2, Zen 3 (2017-2020)", features(amd, true, false, false, false), "Zen", "Zen"},
      {"AMD Zen 4 (2022)", features(amd, true, true, true, false), "Cooperlake", "Zen"},
      // Family 26: Debian 12's OpenBLAS knows no family past 25.
      {"AMD Zen 5 (2024)", features(amd, true, true, true, false), "Cooperlake", "Zen"},
      {"Hygon Dhyana (2018)", features(Vendor::hygon, true, false, false, false), "Zen", "Zen"},
  };
  for (const Cpu& cpu : cpus) {
    CAPTURE(cpu.name);
    CHECK(asked(cpu.features, Isa::avx512) == cpu.atAvx512);
    CHECK(asked(cpu.features, Isa::avx2) == cpu.atAvx2);
    CHECK(asked(cpu.features, Isa::generic) == cpu.atAvx2);
    // What the library asks for is at the level it asks at.
    CHECK(nn::blas::kernelsLevel(cpu.atAvx512) == nn::cpu::featureLevel(cpu.features));
  }
  // aarch64 (no x86-64 features): OpenBLAS's own choice stands.
  CHECK(nn::blas::kernelsFor(CpuFeatures{}, Isa::avx512) == nullptr);
  CHECK(nn::blas::kernelsFor(CpuFeatures{}, Isa::generic) == nullptr);
}

TEST_CASE("OpenBLAS's kernel names have levels, in any case", "[blas]") {
  for (const char* name : {"SkylakeX", "SKYLAKEX", "cooperlake", "SapphireRapids"})
    CHECK(nn::blas::kernelsLevel(name) == Isa::avx512);
  for (const char* name : {"Haswell", "zen", "ZEN"}) CHECK(nn::blas::kernelsLevel(name) == Isa::avx2);
  for (const char* name :
       {"Prescott", "Sandybridge", "Nehalem", "Barcelona", "Excavator", "ARMV8", "NeoverseN1", "Unknown", ""})
    CHECK(nn::blas::kernelsLevel(name) == Isa::generic);
}

TEST_CASE("Kernels below the CPU's level are said, naming both and why", "[blas]") {
  const CpuFeatures xeon = features(Vendor::intel, true, true, true, true);
  nn::blas::Report report;
  report.library = "OpenBLAS 0.3.21";
  report.kernels = "Prescott";
  report.chosenBy = nn::blas::Chooser::openblas;
  const std::string loadedBefore = nn::blas::belowLevelWarning(report, Isa::avx512, xeon);
  CHECK_THAT(loadedBefore, Contains("OpenBLAS 0.3.21 runs its Prescott kernels (below AVX2)") &&
                               Contains("AVX2, AVX-512, AVX512-BF16, AMX-BF16") && Contains("runs AVX-512 ones") &&
                               Contains("loaded OpenBLAS before the library") &&
                               Contains("OPENBLAS_CORETYPE=Cooperlake"));
  // Held to AVX2, the advice is the AVX2 kernels.
  CHECK_THAT(nn::blas::belowLevelWarning(report, Isa::avx2, xeon),
             Contains("runs AVX2 ones") && Contains("OPENBLAS_CORETYPE=Haswell"));

  report.chosenBy = nn::blas::Chooser::environment;
  report.kernels = report.asked = "Haswell";
  CHECK_THAT(nn::blas::belowLevelWarning(report, Isa::avx512, xeon),
             Contains("its Haswell kernels (AVX2)") && Contains("OPENBLAS_CORETYPE=Haswell asked for them"));
  CHECK(nn::blas::belowLevelWarning(report, Isa::avx2, xeon).empty());

  report.chosenBy = nn::blas::Chooser::features;
  report.asked = "Cooperlake";
  report.kernels = "Sandybridge";
  CHECK_THAT(nn::blas::belowLevelWarning(report, Isa::avx512, xeon),
             Contains("asked for Cooperlake, which this OpenBLAS does not have"));

  // At the level or above, or off x86-64: nothing to say.
  report.kernels = "Cooperlake";
  CHECK(nn::blas::belowLevelWarning(report, Isa::avx512, xeon).empty());
  report.kernels = "SkylakeX";
  CHECK(nn::blas::belowLevelWarning(report, Isa::avx2, xeon).empty());
  report.kernels = "ARMV8";
  CHECK(nn::blas::belowLevelWarning(report, Isa::generic, CpuFeatures{}).empty());
}

TEST_CASE("Here OpenBLAS runs the kernels of this CPU's level and the environment is left as it was", "[blas]") {
  const CpuFeatures& cpu = nn::cpu::cpuFeatures();
  const nn::blas::Report& report = nn::blas::report();
  const char* user = std::getenv("OPENBLAS_CORETYPE");
  CAPTURE(report.kernels, report.asked, nn::cpuInfo());
  CHECK(report.library.rfind("OpenBLAS", 0) == 0);
  CHECK(std::string(nn::blas::kernelName()) == report.kernels);
  CHECK_THAT(nn::cpuInfo(), Contains(nn::cpu::cpuModelName()) && Contains(report.library + ", " + report.kernels) &&
                                Contains(std::string("kernels: ") + nn::cpu::isaName(nn::cpu::isa())));
  if (!cpu.avx2) {
    CHECK(report.chosenBy == nn::blas::Chooser::openblas);
    return;
  }
  if (user && *user) {
    CHECK(report.chosenBy == nn::blas::Chooser::environment);
    CHECK(report.asked == user);
    return;
  }
  REQUIRE(report.chosenBy == nn::blas::Chooser::features);
  // What was asked for runs, at the level wanted (the CPU's, or NN_CPU_ISA's where lower, at
  // least the build's AVX2), with nothing to warn of.
  CHECK(report.asked == asked(cpu, nn::blas::wantedLevel()));
  CHECK(strcasecmp(report.kernels.c_str(), report.asked.c_str()) == 0);
  CHECK(rank(nn::blas::kernelsLevel(report.kernels)) >= rank(nn::blas::wantedLevel()));
  CHECK(report.warning.empty());
  // OPENBLAS_CORETYPE was set for the loading only: child processes choose for themselves.
  CHECK(user == nullptr);
}

TEST_CASE("In a new process NN_CPU_ISA holds OpenBLAS's kernels and OPENBLAS_CORETYPE is obeyed and said",
          "[blas][noemulator]") {
  const CpuFeatures& cpu = nn::cpu::cpuFeatures();
  if (!cpu.avx2) NN_SKIP("OpenBLAS's own choice stands off x86-64");
  const nn::test::ExampleResult free = runChild({});
  CHECK_THAT(free.stdoutText, Contains("kernels: " + asked(cpu, nn::cpu::featureLevel(cpu)) + "\n") &&
                                  Contains("(chosen by the CPU's features)") && Contains("OPENBLAS_CORETYPE: unset"));
  CHECK(free.stderrText.find("nn: OpenBLAS") == std::string::npos);

  // At avx2 an AVX-512 CPU runs an AVX2 machine's GEMMs (OpenBLAS alone would take AVX-512's).
  const nn::test::ExampleResult avx2 = runChild({"NN_CPU_ISA=avx2"});
  CHECK_THAT(avx2.stdoutText,
             Contains("kernels: " + asked(cpu, Isa::avx2) + "\n") && Contains("OPENBLAS_CORETYPE: unset"));
  CHECK(nn::blas::kernelsLevel(asked(cpu, Isa::avx2)) == Isa::avx2);
  CHECK(avx2.stderrText.find("nn: OpenBLAS") == std::string::npos);

  // The user's choice runs, and stderr says once that it is below the CPU's level.
  const nn::test::ExampleResult user = runChild({"OPENBLAS_CORETYPE=Prescott"});
  CHECK_THAT(user.stdoutText, Contains("kernels: Prescott\n") && Contains("(chosen by OPENBLAS_CORETYPE)") &&
                                  Contains("OPENBLAS_CORETYPE: Prescott"));
  CHECK(count(user.stderrText, "nn: OpenBLAS") == 1);
  CHECK_THAT(user.stderrText,
             Contains("its Prescott kernels (below AVX2)") && Contains("OPENBLAS_CORETYPE=Prescott asked for them"));
}

TEST_CASE("On an Intel CPU newer than OpenBLAS's table OpenBLAS runs the kernels of its features",
          "[blas][noemulator][nosanitizer]") {
  // QEMU's x86-64 emulator gives CPUID an Emerald Rapids Xeon's family and model (6, 207) with
  // the AVX2 and FMA it emulates: Debian 12's OpenBLAS alone runs its SSE3 kernels there
  // (Prescott), as on the Xeon itself. The sanitizers' runtimes do not start under the emulator.
  if (!nn::cpu::cpuFeatures().avx2) NN_SKIP("an x86-64 test");
  if (!onPath("qemu-x86_64")) NN_SKIP("qemu-x86_64 (Debian's qemu-user) is not installed");
  const nn::test::ExampleResult xeon =
      runChild({}, {"qemu-x86_64", "-cpu", "max,vendor=GenuineIntel,family=6,model=207"});
  CHECK_THAT(xeon.stdoutText, Contains("(family 6, model 207) with AVX2;") && Contains("kernels: Haswell\n") &&
                                  Contains("(chosen by the CPU's features)"));
  CHECK(xeon.stderrText.find("nn: OpenBLAS") == std::string::npos);
}

TEST_CASE("(the child of the cases above) says which kernels run", "[.blas-child]") {
  const char* variable = std::getenv("OPENBLAS_CORETYPE");
  std::printf("%s\nkernels: %s\nOPENBLAS_CORETYPE: %s\n", nn::cpuInfo().c_str(), nn::blas::kernelName(),
              variable ? variable : "unset");
  std::fflush(stdout);
  CHECK_FALSE(nn::blas::report().kernels.empty());
}
