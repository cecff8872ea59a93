// The fuzz targets' seed corpora and every input that once broke a reader, through the same
// reader calls as the fuzz targets (tests/fuzz/Readers.h): each input is read or rejected with
// nn::Error, never anything else, "valid-*" seeds are accepted, "broken-*" seeds rejected,
// and the whole run stays far below the fuzzers' memory limit of 2 GB.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
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

// Feeds every seed and regression input of `target` to `read`. A valid seed must be accepted
// by exactly the readers `accepting` names for it (a checkpoint by all four), a broken one by
// none. The seeds and the regression inputs are committed: fewer than `minimumRegressions`
// means the test looks in the wrong place.
template <typename Read>
void readAll(const std::string& target, Read read, const std::map<std::string, int>& accepting,
             size_t minimumRegressions) {
  const std::vector<fs::path> seeds = filesIn("corpus", target);
  const std::vector<fs::path> regressions = filesIn("regressions", target);
  REQUIRE(seeds.size() >= 4);
  REQUIRE(regressions.size() >= minimumRegressions);
  resetPeakMemory();
  size_t valid = 0, broken = 0;
  for (const std::vector<fs::path>* files : {&seeds, &regressions}) {
    for (const fs::path& path : *files) {
      INFO(path.string());
      const std::string bytes = readFile(path);
      int accepted = -1;
      REQUIRE_NOTHROW(accepted = read(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
      if (startsWith(path.filename().string(), "valid-")) {
        REQUIRE(accepting.count(path.filename().string()) == 1);
        CHECK(accepted == accepting.at(path.filename().string()));
        ++valid;
      }
      if (startsWith(path.filename().string(), "broken-")) {
        CHECK(accepted == 0);
        ++broken;
      }
    }
  }
  CHECK(valid == accepting.size());
  CHECK(broken > 0);
  CHECK(peakMemoryMb() < 1024);
}

}  // namespace

TEST_CASE("IDX seeds and regression inputs are read or rejected with nn::Error", "[fuzz]") {
  // Plain files are read as they are and gzip-compressed; compressed ones as they are.
  readAll("idx", nn::fuzz::readIdx,
          {{"valid-rank1.idx", 2}, {"valid-rank3.idx", 2}, {"valid-rank3.idx.gz", 1}, {"valid-rank4-empty.idx", 2}}, 3);
}

TEST_CASE("checkpoint seeds and regression inputs are read or rejected with nn::Error", "[fuzz]") {
  // readSafetensors, load, loadStateInto and loadCheckpoint: a checkpoint of the fuzz setup
  // passes all four; a module tree of its own loads but fits neither the setup's model nor its
  // training state; tensors without a module tree load into the setup's model only.
  readAll("checkpoint", nn::fuzz::readCheckpoint,
          {{"valid-checkpoint.safetensors", 4},
           {"valid-empty.safetensors", 1},
           {"valid-every-module.safetensors", 2},
           {"valid-tensors-only.safetensors", 2}},
          10);
}
