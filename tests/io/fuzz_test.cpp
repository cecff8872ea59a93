// The fuzz targets' seed corpora and every input that once broke one, through the same calls as
// the fuzz targets (tests/fuzz/Readers.h, ModuleTrees.h, TensorViews.h): each input is read or
// rejected with nn::Error, never anything else, "valid-*" seeds are accepted, "broken-*" seeds
// rejected, every module type's seed runs whole, and the whole run stays far below the fuzzers'
// memory limit of 2 GB.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "nn/core/Module.h"
#include "tests/fuzz/ModuleTrees.h"
#include "tests/fuzz/Readers.h"
#include "tests/fuzz/TensorViews.h"

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

TEST_CASE("image seeds and regression inputs are decoded or rejected with nn::Error", "[fuzz]") {
  // decodeImageHeader and decodeImage: a picture passes both; a truncated one may pass the
  // header alone, so broken seeds are cut before their header ends.
  readAll("image", nn::fuzz::readImage,
          {{"valid-grey-16bit.png", 2},
           {"valid-grey.jpg", 2},
           {"valid-palette.png", 2},
           {"valid-rgb.jpg", 2},
           {"valid-rgb.png", 2}},
          1);
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

TEST_CASE("Torch7 seeds and regression inputs are read or rejected with nn::Error", "[fuzz]") {
  // readTorch7 and loadTorch7: a model's file passes both; a file of tensors, tables or a class
  // of no module passes the reader alone.
  readAll("torch7", nn::fuzz::readTorch7,
          {{"valid-convnet.t7", 2},
           {"valid-data-parallel.t7", 2},
           {"valid-floattensor.t7", 1},
           {"valid-list-table.t7", 1},
           {"valid-recursive-class.t7", 1},
           {"valid-recursive-kv-table.t7", 1},
           {"valid-residual.t7", 2},
           {"valid-shared.t7", 2},
           {"valid-tds-hash.t7", 1},
           {"valid-tds-vec.t7", 1},
           {"valid-unknown-class.t7", 1}},
          1);
}

TEST_CASE("module tree seeds and regression inputs run, or stop at an nn::Error", "[fuzz]") {
  // The fuzzer knows every module type of //nn (DataParallelTable, of //cunn, runs threads of
  // its own and is left out), and the corpus holds one seed for each.
  std::set<std::string> known;
  for (const nn::fuzz::Prototype& p : nn::fuzz::prototypes()) known.insert(p.module->typeName());
  for (const std::string& type : nn::registeredModuleTypes()) {
    INFO(type);
    if (type != "nn.DataParallelTable") CHECK(known.count(type) == 1);
  }
  const std::vector<fs::path> seeds = filesIn("corpus", "module_tree");
  CHECK(seeds.size() == nn::fuzz::prototypes().size());
  resetPeakMemory();
  // A seed is its module type alone, unchanged, on an input it takes: forward, backward and
  // forward again run.
  for (const fs::path& path : seeds) {
    INFO(path.string());
    const std::string bytes = readFile(path);
    int ran = -1;
    REQUIRE_NOTHROW(ran = nn::fuzz::runModuleTree(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    CHECK(ran == 2);
  }
  // Each regression input is refused by the check that was missing when the fuzzer found it.
  const std::map<std::string, std::pair<int, std::string>> refusals = {
      {"narrow-length-int64-min.bin", {0, "nn.Narrow"}},
      {"select-index-int64-max.bin", {0, "nn.Select"}},
      {"zero-padding-int64-max.bin", {0, "nn.SpatialZeroPadding"}},
  };
  const std::vector<fs::path> regressions = filesIn("regressions", "module_tree");
  CHECK(regressions.size() == refusals.size());
  for (const fs::path& path : regressions) {
    INFO(path.string());
    const std::string bytes = readFile(path);
    int ran = -1;
    std::string refusal;
    REQUIRE_NOTHROW(
        ran = nn::fuzz::runModuleTree(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &refusal));
    INFO(refusal);
    REQUIRE(refusals.count(path.filename().string()) == 1);
    const auto& [expected, who] = refusals.at(path.filename().string());
    CHECK(ran == expected);
    CHECK(refusal.find(who) != std::string::npos);
  }
  CHECK(peakMemoryMb() < 1024);
}

TEST_CASE("tensor view seeds and regression inputs keep every view inside its storage", "[fuzz]") {
  const std::vector<fs::path> seeds = filesIn("corpus", "tensor_view");
  const std::vector<fs::path> regressions = filesIn("regressions", "tensor_view");
  CHECK(seeds.size() >= nn::fuzz::tensorViewSeeds().size());
  CHECK(regressions.size() >= 1);
  for (const std::vector<fs::path>* files : {&seeds, &regressions}) {
    for (const fs::path& path : *files) {
      INFO(path.string());
      const std::string bytes = readFile(path);
      int accepted = -1;
      REQUIRE_NOTHROW(accepted =
                          nn::fuzz::runTensorViews(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
      if (files == &seeds) CHECK(accepted > 0);
    }
  }
}
