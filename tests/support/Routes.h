// The route checks of the CPU kernels' tests: how many passes a route ran (nn/cpu/Routes.h), and
// the skip of a test whose route the kernels' level (nn/cpu/Isa.h: this CPU, or NN_CPU_ISA) does
// not run, so that such a test counts as skipped there, never as passed.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "nn/cpu/Isa.h"
#include "nn/cpu/Routes.h"
#include "tests/support/Skip.h"

namespace nn::test {

/// Counts the passes of one route from its construction on.
class RouteWatch {
 public:
  explicit RouteWatch(cpu::Route route) : route_(route) {
    for (int p = 0; p < cpu::kPasses; ++p) before_[p] = cpu::routeCount(route, static_cast<cpu::Pass>(p));
  }
  /// The passes of `pass` the route ran since the watch was made.
  int64_t ran(cpu::Pass pass) const { return cpu::routeCount(route_, pass) - before_[static_cast<int>(pass)]; }

 private:
  cpu::Route route_;
  std::array<int64_t, cpu::kPasses> before_{};
};

/// Empty where the kernels' level is `level` or above; else why a route of that level cannot run.
inline std::string missingIsa(cpu::Isa level) {
  if (cpu::isaAtLeast(level)) return "";
  return std::string("needs the CPU kernels' level ") + cpu::isaName(level) + "; this run has " +
         cpu::isaName(cpu::isa()) + " (the CPU's " + cpu::isaName(cpu::machineIsa()) + ", NN_CPU_ISA may lower it)";
}

}  // namespace nn::test

/// Skips the running test case where the kernels' level is below `level` (nn::cpu::Isa).
#define NN_REQUIRE_ISA(level)                                                                                      \
  do {                                                                                                             \
    if (const std::string nn_isa_why_ = ::nn::test::missingIsa(level); !nn_isa_why_.empty()) NN_SKIP(nn_isa_why_); \
  } while (0)
