// The residual network example (examples/resnet.cpp) as a user runs it, on small synthetic
// data: it learns, trains on cpu:0,cpu:1 through a DataParallelTable, and a run stopped after
// an epoch and resumed ends with the same bytes as an uninterrupted one.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "nn/nn.h"
#include "tests/support/ExampleRun.h"
#include "tests/support/TempDir.h"

using nn::test::fileBytes;
using nn::test::runExample;

namespace {

// The test accuracy of the last "epoch N  train loss ...  test accuracy X" line.
double lastAccuracy(const std::string& out) {
  const std::string key = "test accuracy ";
  const size_t at = out.rfind(key);
  REQUIRE(at != std::string::npos);
  return std::stod(out.substr(at + key.size()));
}

}  // namespace

TEST_CASE("the residual network learns, on one device and on two, and resumes bit-identically", "[resnet][noemulator]") {
  nn::test::TempDir dir;
  nn::test::writeSyntheticSplit(dir, "train", 512, 1);
  nn::test::writeSyntheticSplit(dir, "t10k", 200, 2);
  for (const std::string devices : {"cpu:0", "cpu:0,cpu:1"}) {
    DYNAMIC_SECTION("on " << devices) {
      auto with = [&](std::vector<std::string> more) {
        more.insert(more.begin(),
                    {"--data-dir", dir.path(), "--batch-size", "32", "--threads", "1", "--devices", devices});
        return more;
      };
      const std::string straight = dir.file("straight.safetensors");
      const nn::test::ExampleResult run = runExample("resnet", with({"--epochs", "2", "--save", straight}));
      CAPTURE(run.stderrText);
      REQUIRE(run.exitStatus == 0);
      CHECK(run.stdoutText.find("nn.ConcatTable") != std::string::npos);
      CHECK(run.stdoutText.find("nn.CAddTable") != std::string::npos);
      // Ten classes, a band each: chance is 0.1.
      CHECK(lastAccuracy(run.stdoutText) > 0.8);

      const std::string resumed = dir.file("resumed.safetensors");
      REQUIRE(runExample("resnet", with({"--epochs", "1", "--save", resumed})).exitStatus == 0);
      REQUIRE(fileBytes(resumed) != fileBytes(straight));
      const nn::test::ExampleResult second =
          runExample("resnet", with({"--epochs", "2", "--resume", resumed, "--save", resumed}));
      REQUIRE(second.exitStatus == 0);
      CHECK(second.stdoutText.find("resumed from " + resumed + " after 1 epoch(s)") != std::string::npos);
      REQUIRE(fileBytes(resumed) == fileBytes(straight));
      // The batch normalisation's running statistics are in the checkpoint.
      bool runningMean = false;
      for (const nn::NamedTensor& t : nn::readSafetensors(straight).tensors)
        runningMean = runningMean || t.name == "0.running_mean" || t.name == "1.running_mean";
      CHECK(runningMean);
    }
  }
}

TEST_CASE("--flip mirrors training images: off trains to other numbers, and each is repeatable", "[resnet][noemulator]") {
  nn::test::TempDir dir;
  nn::test::writeSyntheticSplit(dir, "train", 128, 3);
  nn::test::writeSyntheticSplit(dir, "t10k", 32, 4);
  auto run = [&](const std::string& flip, const std::string& name) {
    const std::string path = dir.file(name);
    const nn::test::ExampleResult r =
        runExample("resnet", {"--data-dir", dir.path(), "--batch-size", "32", "--devices", "cpu:0", "--threads", "1",
                              "--epochs", "1", "--flip", flip, "--save", path});
    CAPTURE(r.stderrText);
    REQUIRE(r.exitStatus == 0);
    return fileBytes(path);
  };
  const std::string on = run("on", "on.safetensors");
  REQUIRE(run("on", "again.safetensors") == on);
  REQUIRE(run("off", "off.safetensors") != on);
  const nn::test::ExampleResult bad = runExample("resnet", {"--flip", "yes"});
  CHECK(bad.exitStatus == 1);
  CHECK(bad.stderrText.find("resnet: --flip expects on or off, got 'yes'") != std::string::npos);
}

TEST_CASE("--sync-bn: two devices train as one device on the whole batch; without it, as two halves",
          "[resnet][noemulator]") {
  nn::test::TempDir dir;
  // Two steps: the floats of summations in other orders have not grown yet.
  nn::test::writeSyntheticSplit(dir, "train", 64, 5);
  nn::test::writeSyntheticSplit(dir, "t10k", 32, 6);
  auto train = [&](const std::string& devices, bool sync, const std::string& name) {
    const std::string path = dir.file(name);
    std::vector<std::string> args{"--data-dir", dir.path(), "--batch-size", "32", "--devices", devices, "--threads",
                                  "1",          "--epochs", "1",           "--flip",       "off", "--save", path};
    if (sync) args.push_back("--sync-bn");
    const nn::test::ExampleResult r = runExample("resnet", args);
    CAPTURE(r.stderrText);
    REQUIRE(r.exitStatus == 0);
    CHECK((r.stdoutText.find(", sync)") != std::string::npos) == sync);
    std::vector<float> values;
    for (const nn::NamedTensor& t : nn::readSafetensors(path).tensors)
      if (t.name.rfind("training.", 0) != 0)
        for (float v : t.value.toVector()) values.push_back(v);
    return values;
  };
  const std::vector<float> one = train("cpu:0", false, "one.safetensors");
  const std::vector<float> synced = train("cpu:0,cpu:1", true, "synced.safetensors");
  const std::vector<float> halves = train("cpu:0,cpu:1", false, "halves.safetensors");
  REQUIRE(one.size() == synced.size());
  REQUIRE(one.size() == halves.size());
  double syncedGap = 0, halvesGap = 0;
  for (size_t i = 0; i < one.size(); ++i) {
    syncedGap = std::max(syncedGap, static_cast<double>(std::abs(synced[i] - one[i])));
    halvesGap = std::max(halvesGap, static_cast<double>(std::abs(halves[i] - one[i])));
  }
  CAPTURE(syncedGap, halvesGap);
  CHECK(syncedGap < 2e-4);
  CHECK(halvesGap > 1e-2);
}

TEST_CASE("the residual network example's usage shows its own name and defaults", "[resnet]") {
  const nn::test::ExampleResult help = runExample("resnet", {"--help"});
  REQUIRE(help.exitStatus == 0);
  CHECK(help.stdoutText.find("Usage: resnet") == 0);
  CHECK(help.stdoutText.find("--lr X             learning rate (sgd 0.1") != std::string::npos);
  CHECK(help.stdoutText.find("(cpu:0,cpu:1)") != std::string::npos);
  CHECK(help.stdoutText.find("left to right with probability 1/2 (on)") != std::string::npos);
  const nn::test::ExampleResult bad = runExample("resnet", {"--epochs", "0"});
  CHECK(bad.exitStatus == 1);
  CHECK(bad.stderrText.find("resnet: --epochs expects") != std::string::npos);
}
