// Catch2's main for every test binary, and a listener that prints one line counting test
// cases, "nn-test-cases: N passed, N failed, N skipped", which tools/test-summary.sh adds up.
//
// A test case that makes no assertion counts as failed, not passed: it checked nothing. One that
// cannot run here says so with NN_SKIP (tests/support/Skip.h) and counts as skipped.
//
// Test cases tagged [gpu] need a usable CUDA device, those tagged [multigpu] two; those tagged
// [nosanitizer] cannot run under a sanitizer, those tagged [noemulator] not in an emulator
// (qemu-aarch64 for the aarch64 build, tools/bazel/aarch64/qemu.sh, which sets NN_TEST_EMULATOR).
// Where the machine has fewer devices, or the build runs a sanitizer, or the test runs
// emulated, they are left out of the run (Catch2 v2 cannot skip a test case that
// has started, so main adds an exclusion to the test spec), counted as skipped, and a line
// says why. A GPU test case is never counted as passed where no GPU ran it.
#define CATCH_CONFIG_RUNNER
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "nn/backend/Backend.h"
#include "nn/cpu/Isa.h"
#include "nn/runtime/ComputeThreads.h"
#include "tests/support/Skip.h"

namespace {

// Set by main before the run: the test cases left out, and why.
int gSkipped = 0;
std::string gSkipReason;
// Set by NN_SKIP in the test case running now.
std::string gSkippedHere;
bool gSkippedHereSet = false;
// Failures the listener counted that Catch does not (test cases without assertions).
int gUncheckedFailures = 0;

void printSummary(int passed, int failed) {
  if (gSkipped > 0) std::printf("skipped %d test case(s): %s\n", gSkipped, gSkipReason.c_str());
  std::printf("nn-test-cases: %d passed, %d failed, %d skipped\n", passed, failed, gSkipped);
  std::fflush(stdout);
}

class TestCaseCounter : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;

  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    const std::string& name = stats.testInfo.name;
    if (stats.totals.assertions.failed > 0 || stats.totals.testCases.failed > 0) {
      ++failed_;
    } else if (gSkippedHereSet) {
      ++gSkipped;
      std::printf("skipped test case '%s': %s\n", name.c_str(), gSkippedHere.c_str());
    } else if (stats.totals.assertions.total() == 0) {
      ++failed_;
      ++gUncheckedFailures;
      std::printf("FAILED: test case '%s' made no assertion\n", name.c_str());
    } else {
      ++passed_;
    }
    gSkippedHereSet = false;
  }

  void testRunEnded(const Catch::TestRunStats&) override { printSummary(passed_, failed_); }

 private:
  int passed_ = 0;
  int failed_ = 0;
};

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

bool hasTag(const Catch::TestCaseInfo& info, const std::string& tag) {
  return std::find(info.lcaseTags.begin(), info.lcaseTags.end(), tag) != info.lcaseTags.end();
}

// CUDA devices a test case needs: 2 for [multigpu], 1 for [gpu], else 0.
int devicesNeeded(const Catch::TestCaseInfo& info) {
  int needed = 0;
  for (const std::string& tag : info.lcaseTags) {
    if (tag == "multigpu") needed = std::max(needed, 2);
    if (tag == "gpu") needed = std::max(needed, 1);
  }
  return needed;
}

// The test spec with "~[tag]" added to each of its filters. A filter ends at each unescaped
// comma and continues from one argument into the next, so the exclusion goes in front of
// every comma-separated part of every argument (it cannot follow a test name, which would
// swallow it). Without arguments the spec is every test case but the hidden ones, as Catch's
// default.
std::vector<std::string> withExclusions(const std::vector<std::string>& spec, const std::vector<std::string>& tags) {
  std::string exclusion;
  for (const std::string& tag : tags) exclusion += "~[" + tag + "] ";
  if (spec.empty()) return {exclusion + "~[.]"};
  std::vector<std::string> out;
  for (const std::string& arg : spec) {
    std::string rewritten = exclusion;
    for (size_t i = 0; i < arg.size(); ++i) {
      rewritten += arg[i];
      if (arg[i] == '\\' && i + 1 < arg.size())
        rewritten += arg[++i];
      else if (arg[i] == ',')
        rewritten += exclusion;
    }
    out.push_back(rewritten);
  }
  return out;
}

}  // namespace

CATCH_REGISTER_LISTENER(TestCaseCounter)

void nn::test::markSkipped(const std::string& reason) {
  gSkippedHere = reason;
  gSkippedHereSet = true;
}

// session.run(), failing where the listener counted failures that Catch does not.
static int runCounted(Catch::Session& session) {
  const int status = session.run();
  return status != 0 ? status : gUncheckedFailures > 0 ? 1 : 0;
}

int main(int argc, char* argv[]) {
  Catch::Session session;
  const int status = session.applyCommandLine(argc, argv);
  if (status != 0) return status;
  const Catch::ConfigData& data = session.configData();
  if (data.showHelp || data.listTests || data.listTestNamesOnly || data.listTags || data.listReporters)
    return session.run();

  // Which forms of the CPU kernels this run tests (NN_CPU_ISA lowers the CPU's level).
  std::printf("CPU kernels' level: %s (this CPU's: %s)\n%s\n", nn::cpu::isaName(nn::cpu::isa()),
              nn::cpu::isaName(nn::cpu::machineIsa()), nn::cpuInfo().c_str());

  // The test cases this command line selects, and what they need.
  const Catch::Config& config = session.config();
  const std::vector<Catch::TestCase> selected =
      Catch::filterTests(Catch::getAllTestCasesSorted(config), config.testSpec(), config);
  std::vector<std::string> excludedTags;
  std::vector<std::string> reasons;
  if (kSanitized) {
    int count = 0;
    for (const Catch::TestCase& test : selected) count += hasTag(test, "nosanitizer");
    if (count > 0) {
      gSkipped += count;
      excludedTags.push_back("nosanitizer");
      reasons.push_back(
          "tagged [nosanitizer] (they replace operator new to count allocations), and this build "
          "runs under a sanitizer");
    }
  }
  // Emulated, floating-point code runs a few hundred times slower than on the CPU itself: the
  // examples' trainings would take hours. And a limit on the address space binds the emulator.
  const char* emulator = std::getenv("NN_TEST_EMULATOR");
  if (emulator != nullptr) {
    int count = 0;
    for (const Catch::TestCase& test : selected)
      count += hasTag(test, "noemulator") && !(kSanitized && hasTag(test, "nosanitizer"));
    if (count > 0) {
      gSkipped += count;
      excludedTags.push_back("noemulator");
      reasons.push_back(std::string("tagged [noemulator] (trainings of the examples, hours emulated; limits on the "
                                    "address space), and this test runs in ") +
                        emulator);
    }
  }
  auto leftOut = [&](const Catch::TestCase& test) {
    return (kSanitized && hasTag(test, "nosanitizer")) || (emulator != nullptr && hasTag(test, "noemulator"));
  };
  int mostNeeded = 0;
  for (const Catch::TestCase& test : selected)
    if (!leftOut(test)) mostNeeded = std::max(mostNeeded, devicesNeeded(test));
  // Only now ask the CUDA runtime: binaries without GPU test cases never start it.
  nn::Backend* backend = mostNeeded > 0 ? nn::findBackend(nn::DeviceType::CUDA) : nullptr;
  const int available = backend != nullptr ? backend->deviceCount() : 0;
  if (mostNeeded > available) {
    for (const Catch::TestCase& test : selected)
      if (devicesNeeded(test) > available && !leftOut(test)) ++gSkipped;
    if (available == 0) {
      excludedTags.insert(excludedTags.end(), {"gpu", "multigpu"});
      reasons.push_back(
          "tagged [gpu] or [multigpu], and no CUDA device is available: " +
          (backend != nullptr
               ? backend->unavailableReason()
               : std::string("this build has no CUDA backend (no CUDA toolkit was found when it was built)")));
    } else {
      excludedTags.push_back("multigpu");
      reasons.push_back("tagged [multigpu], which need 2 CUDA devices, and this machine has " +
                        std::to_string(available));
    }
  }
  if (excludedTags.empty()) return runCounted(session);
  for (const std::string& r : reasons) gSkipReason += (gSkipReason.empty() ? "" : "; ") + r;
  if (gSkipped == static_cast<int>(selected.size())) {
    // Nothing is left to run; Catch would only complain that the spec matches nothing.
    printSummary(0, 0);
    return 0;
  }
  Catch::ConfigData reduced = data;
  reduced.testsOrTags = withExclusions(data.testsOrTags, excludedTags);
  session.useConfigData(reduced);
  return runCounted(session);
}
