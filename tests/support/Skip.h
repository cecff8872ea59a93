// NN_SKIP(reason): ends the running test case and counts it as skipped, with the reason, for a
// test that cannot run on this machine (a data set not installed). tests/support/main.cpp counts it.
#pragma once

#include <sstream>
#include <string>

namespace nn::test {

/// Marks the running test case as skipped; NN_SKIP then returns from it.
void markSkipped(const std::string& reason);

}  // namespace nn::test

#define NN_SKIP(reason)                             \
  do {                                              \
    std::ostringstream nn_skip_stream_;             \
    nn_skip_stream_ << reason;                      \
    ::nn::test::markSkipped(nn_skip_stream_.str()); \
    return;                                         \
  } while (0)
