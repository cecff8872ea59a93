// The fuzz targets' seed corpora and every input that once broke a reader, through the same
// reader calls as the fuzz targets (tests/fuzz/Readers.h): each input is read or rejected with
// nn::Error, never anything else, "valid-*" seeds are accepted, "broken-*" seeds rejected,
// and the whole run stays far below the fuzzers' memory limit of 2 GB.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/Readers.h"

namespace fs = std::filesystem;

namespace {

// The files of tests/fuzz/<kind>/<target>, sorted; relative paths hold under `bazel test`
// (which runs in the runfiles tree) and from the repository root.
std::vector<fs::path> filesIn(const std::string& kind, const std::string& target) {
  std::vector<fs::path> files;
  const fs::path folder = fs::path("tests/fuzz") / kind / target;
  if (!fs::is_directory(folder)) return files;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool startsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// The process's peak resident memory (VmHWM) since the last resetPeakMemory().
int64_t peakMemoryMb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (startsWith(line, "VmHWM:")) return std::stoll(line.substr(6)) / 1024;  // in kB
  FAIL("no VmHWM in /proc/self/status");
  return 0;
}

// Linux resets VmHWM to the current memory when "5" is written to clear_refs.
void resetPeakMemory() { std::ofstream("/proc/self/clear_refs") << "5"; }

// Feeds every seed and regression input of `target` to `read`.
template <typename Read>
void readAll(const std::string& target, Read read) {
  const std::vector<fs::path> seeds = filesIn("corpus", target);
  const std::vector<fs::path> regressions = filesIn("regressions", target);
  // The seeds are committed: finding none means the test looks in the wrong place.
  REQUIRE(seeds.size() >= 4);
  resetPeakMemory();
  size_t valid = 0, broken = 0;
  for (const std::vector<fs::path>* files : {&seeds, &regressions}) {
    for (const fs::path& path : *files) {
      INFO(path.string());
      const std::string bytes = readFile(path);
      int accepted = -1;
      REQUIRE_NOTHROW(accepted = read(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
      if (startsWith(path.filename().string(), "valid-")) {
        CHECK(accepted > 0);
        ++valid;
      }
      if (startsWith(path.filename().string(), "broken-")) {
        CHECK(accepted == 0);
        ++broken;
      }
    }
  }
  CHECK(valid > 0);
  CHECK(broken > 0);
  CHECK(peakMemoryMb() < 1024);
}

}  // namespace

TEST_CASE("IDX seeds and regression inputs are read or rejected with nn::Error", "[fuzz]") {
  readAll("idx", nn::fuzz::readIdx);
}

TEST_CASE("checkpoint seeds and regression inputs are read or rejected with nn::Error", "[fuzz]") {
  readAll("checkpoint", nn::fuzz::readCheckpoint);
}
