// Test support for the profile (nn/core/Profiler.h): profiling on for one test case, and the
// numbers of a row of a profile's text.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "nn/core/Profiler.h"

namespace nn::test {

/// Profiling on for one test case (process-wide), off again whatever happens in it.
struct ProfilingOn {
  ProfilingOn() { setProfiling(true); }
  ~ProfilingOn() { setProfiling(false); }
  ProfilingOn(const ProfilingOn&) = delete;
  ProfilingOn& operator=(const ProfilingOn&) = delete;
};

/// The numbers of the line of `text` that starts with `label` and a space (the label's words,
/// then numbers, up to the first word after them); empty where no line does.
inline std::vector<double> profileRow(const std::string& text, const std::string& label) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.compare(0, label.size() + 1, label + " ") != 0) continue;
    std::istringstream cells(line.substr(label.size()));
    std::vector<double> numbers;
    for (double x; cells >> x;) numbers.push_back(x);
    return numbers;
  }
  return {};
}

}  // namespace nn::test
