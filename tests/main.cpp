// Catch2's main for every test binary, and a listener that prints one line counting test
// cases, "nn-test-cases: N passed, N failed, N skipped", which tools/test-summary.sh adds up.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include <cstdio>

namespace {

class TestCaseCounter : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;

  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    if (stats.totals.assertions.failed > 0 || stats.totals.testCases.failed > 0)
      ++failed_;
    else
      ++passed_;
  }

  void testRunEnded(const Catch::TestRunStats&) override {
    std::printf("nn-test-cases: %d passed, %d failed, %d skipped\n", passed_, failed_, 0);
    std::fflush(stdout);
  }

 private:
  int passed_ = 0;
  int failed_ = 0;
};

}  // namespace

CATCH_REGISTER_LISTENER(TestCaseCounter)
