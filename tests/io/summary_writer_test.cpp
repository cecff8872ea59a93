// nn::SummaryWriter: TensorBoard event files. The framing is checked here record by record
// (lengths and CRC-32Cs), and TensorBoard's own reader (PyPI's tensorboard, from
// tools/reference-venv.sh; the comparison is skipped, never passed, where it cannot be
// installed) reads back every scalar, its step and its time; the LeNet example's --logdir
// curves equal its --metrics file.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "nn/io/SummaryWriter.h"
#include "nn/tensor/Error.h"
#include "tests/support/ExampleRun.h"
#include "tests/support/OnnxRuntime.h"
#include "tests/support/Skip.h"
#include "tests/support/TempDir.h"

namespace {

uint64_t fixed(const std::string& bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return v;
}

uint32_t masked(const std::string& bytes) {
  const uint32_t crc = nn::crc32c(bytes.data(), bytes.size());
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

// The records of an event file, each checked against its length and both CRCs.
std::vector<std::string> records(const std::string& path) {
  const std::string bytes = nn::test::fileBytes(path);
  std::vector<std::string> out;
  size_t at = 0;
  while (at < bytes.size()) {
    REQUIRE(at + 12 <= bytes.size());
    const uint64_t length = fixed(bytes, at, 8);
    REQUIRE(fixed(bytes, at + 8, 4) == masked(bytes.substr(at, 8)));
    REQUIRE(at + 12 + length + 4 <= bytes.size());
    const std::string data = bytes.substr(at + 12, length);
    REQUIRE(fixed(bytes, at + 12 + length, 4) == masked(data));
    out.push_back(data);
    at += 12 + length + 4;
  }
  return out;
}

std::string onlyFile(const std::string& folder) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) files.push_back(entry.path().string());
  REQUIRE(files.size() == 1);
  REQUIRE(std::filesystem::path(files[0]).filename().string().rfind("events.out.tfevents.", 0) == 0);
  return files[0];
}

// TensorBoard's reading of `logdir`: "tag step value wall_time" lines, sorted.
std::vector<std::string> tensorboardScalars(const std::string& python, const std::string& logdir) {
  const nn::test::ExampleResult r = nn::test::runCommand({python, "tests/reference/tensorboard_scalars.py", logdir});
  INFO(r.stderrText);
  REQUIRE(r.exitStatus == 0);
  std::vector<std::string> lines;
  std::istringstream in(r.stdoutText);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("crc32c is CRC-32C (Castagnoli)", "[SummaryWriter]") {
  // The check value of the CRC catalogue, and RFC 3720's 32 bytes of zeros.
  REQUIRE(nn::crc32c("123456789", 9) == 0xe3069283u);
  const std::string zeros(32, '\0');
  REQUIRE(nn::crc32c(zeros.data(), zeros.size()) == 0x8a9136aau);
  REQUIRE(nn::crc32c("", 0) == 0u);
}

TEST_CASE("SummaryWriter frames each event as TensorBoard reads it", "[SummaryWriter]") {
  nn::test::TempDir dir;
  const std::string logdir = dir.file("runs/a");
  {
    nn::SummaryWriter writer(logdir);
    writer.addScalar("train/loss", 2.5, 1, 1700000000.25);
    writer.addScalar("train/loss", 0.125, 2, 1700000001.5);
    writer.addScalar("test/accuracy", 0.75, 1, 1700000002.0);
    REQUIRE(writer.path() == onlyFile(logdir));
  }
  const std::vector<std::string> events = records(onlyFile(logdir));
  REQUIRE(events.size() == 4);
  REQUIRE(events[0].find("brain.Event:2") != std::string::npos);
  REQUIRE(events[1].find("train/loss") != std::string::npos);
  // The float 2.5 after simple_value's key (field 2, 32-bit: 0x15).
  const float value = 2.5f;
  std::string bits(4, '\0');
  std::memcpy(&bits[0], &value, 4);
  REQUIRE(events[1].find(std::string("\x15") + bits) != std::string::npos);

  const std::string python = nn::test::referencePython();
  if (python.empty()) NN_SKIP("TensorBoard is not installed (tools/reference-venv.sh); the framing was checked");
  REQUIRE(tensorboardScalars(python, logdir) == std::vector<std::string>{"test/accuracy 1 0.75 1700000002.0",
                                                                         "train/loss 1 2.5 1700000000.25",
                                                                         "train/loss 2 0.125 1700000001.5"});
}

TEST_CASE("SummaryWriter refuses a folder it cannot make, naming it", "[SummaryWriter]") {
  nn::test::TempDir dir;
  std::ofstream(dir.file("file")) << "x";
  REQUIRE_THROWS_WITH(nn::SummaryWriter(dir.file("file/runs")),
                      Catch::Contains("nn::SummaryWriter") && Catch::Contains(dir.file("file/runs")));
  REQUIRE_THROWS_WITH(nn::SummaryWriter(""), Catch::Contains("nn::SummaryWriter"));
  nn::SummaryWriter writer(dir.file("ok"));
  REQUIRE_THROWS_WITH(writer.addScalar("", 1, 0), Catch::Contains("tag"));
}

TEST_CASE("SummaryWriter refuses tags that are not UTF-8, which TensorBoard's reader refuses", "[SummaryWriter]") {
  nn::test::TempDir dir;
  nn::SummaryWriter writer(dir.file("runs"));
  writer.addScalar("loss/\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x93\x88", 1, 1);  // é, €, an emoji: UTF-8
  for (const char* bad : {"loss\xff", "a\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"}) {
    CAPTURE(bad);
    REQUIRE_THROWS_WITH(writer.addScalar(bad, 1, 1), Catch::Contains("expected a UTF-8 tag"));
  }
  CHECK_THROWS_WITH(writer.addScalar("train\xfe", 1, 1), Catch::Contains("byte 0xfe at position 5 of 'train...'"));
  CHECK(records(onlyFile(dir.file("runs"))).size() == 2);  // the header and the one good scalar
}

TEST_CASE("Two SummaryWriters on one folder in the same second get files of their own", "[SummaryWriter]") {
  nn::test::TempDir dir;
  nn::SummaryWriter first(dir.file("runs")), second(dir.file("runs"));
  CHECK(first.path() != second.path());
  first.addScalar("a", 1, 1);
  second.addScalar("b", 2, 1);
  CHECK(records(first.path()).size() == 2);
  CHECK(records(second.path()).size() == 2);
}

TEST_CASE("lenet --logdir: TensorBoard reads the curves of --metrics, per step and per epoch", "[SummaryWriter]") {
  nn::test::TempDir dir;
  nn::test::writeSyntheticSplit(dir, "train", 64, 1);
  nn::test::writeSyntheticSplit(dir, "t10k", 32, 2);
  const std::string logdir = dir.file("runs"), metrics = dir.file("metrics.json");
  const nn::test::ExampleResult run = nn::test::runExample(
      {"--data-dir", dir.path(), "--epochs", "2", "--batch-size", "16", "--logdir", logdir, "--metrics", metrics});
  INFO(run.stdoutText << run.stderrText);
  REQUIRE(run.exitStatus == 0);
  // Per step (4 a epoch): the loss, the speed, the next step's rate and the gradient's norm; per
  // epoch: three curves.
  REQUIRE(records(onlyFile(logdir)).size() == 1 + 4 * 8 + 3 * 2);
  const std::string python = nn::test::referencePython();
  if (python.empty()) NN_SKIP("TensorBoard is not installed (tools/reference-venv.sh); the framing was checked");
  // TensorBoard's values by tag and step.
  std::map<std::pair<std::string, int64_t>, double> values;
  for (const std::string& line : tensorboardScalars(python, logdir)) {
    std::istringstream in(line);
    std::string tag;
    int64_t step;
    double value;
    in >> tag >> step >> value;
    values[{tag, step}] = value;
  }
  std::istringstream lines(nn::test::fileBytes(metrics));
  int epochs = 0;
  for (std::string line; std::getline(lines, line); ++epochs) {
    const nlohmann::json m = nlohmann::json::parse(line);
    const int64_t epoch = m["epoch"];
    INFO("epoch " << epoch);
    REQUIRE(values.count({"epoch/train_loss", epoch}) == 1);
    REQUIRE(values.count({"epoch/test_accuracy", epoch}) == 1);
    REQUIRE(values.count({"epoch/learning_rate", epoch}) == 1);
    // Stored as floats: the metric's float.
    CHECK(static_cast<float>(values[{"epoch/train_loss", epoch}]) == static_cast<float>(m["train_loss"].get<double>()));
    CHECK(static_cast<float>(values[{"epoch/test_accuracy", epoch}]) ==
          static_cast<float>(m["test_accuracy"].get<double>()));
    // SGD's next rate after 4 steps an epoch: lr / (1 + t lrDecay), the flags' floats.
    const double lr = 0.05f, decay = 2e-4f;
    CHECK(static_cast<float>(values[{"epoch/learning_rate", epoch}]) ==
          static_cast<float>(lr / (1 + 4.0 * static_cast<double>(epoch) * decay)));
  }
  REQUIRE(epochs == 2);
  double epochLoss[2] = {0, 0};
  for (int64_t step = 1; step <= 8; ++step) {
    INFO("step " << step);
    REQUIRE(values.count({"train/loss", step}) == 1);
    REQUIRE(values.count({"train/images_per_second", step}) == 1);
    CHECK(values[{"train/images_per_second", step}] > 0);
    // SGD's rate after `step` steps, as --metrics gives it per epoch.
    CHECK(static_cast<float>(values[{"train/learning_rate", step}]) ==
          static_cast<float>(double{0.05f} / (1 + static_cast<double>(step) * double{2e-4f})));
    REQUIRE(values.count({"train/grad_norm", step}) == 1);
    CHECK(values[{"train/grad_norm", step}] > 0);
    epochLoss[(step - 1) / 4] += values[{"train/loss", step}] / 4;
  }
  // An epoch's train loss is the mean of its steps' losses.
  for (int64_t epoch = 1; epoch <= 2; ++epoch)
    CHECK(epochLoss[epoch - 1] == Approx(values[{"epoch/train_loss", epoch}]).epsilon(1e-5));
  REQUIRE(values.size() == 4 * 8 + 3 * 2);
}

TEST_CASE("lenet --clip-grad-norm: the norm of each step's gradient is recorded, and clipping changes the run",
          "[SummaryWriter]") {
  nn::test::TempDir dir;
  nn::test::writeSyntheticSplit(dir, "train", 64, 1);
  nn::test::writeSyntheticSplit(dir, "t10k", 32, 2);
  const std::vector<std::string> common{"--data-dir", dir.path(), "--epochs", "1", "--batch-size", "16"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), common.begin(), common.end());
    return more;
  };
  const std::string clipped = dir.file("clipped"), free = dir.file("free");
  const nn::test::ExampleResult a = nn::test::runExample(with({"--logdir", clipped, "--clip-grad-norm", "0.05"}));
  const nn::test::ExampleResult b = nn::test::runExample(with({"--logdir", free}));
  REQUIRE(a.exitStatus == 0);
  REQUIRE(b.exitStatus == 0);
  // Per step (4): the loss, the speed, the rate and the norm, clipped or not; per epoch: three curves.
  CHECK(records(onlyFile(clipped)).size() == 1 + 4 * 4 + 3);
  CHECK(records(onlyFile(free)).size() == 1 + 4 * 4 + 3);
  // A norm of 0.05 holds every step's gradient back: the epoch's loss differs.
  const std::string lossA = a.stdoutText.substr(a.stdoutText.find("train loss")),
                    lossB = b.stdoutText.substr(b.stdoutText.find("train loss"));
  CHECK(lossA.substr(0, 18) != lossB.substr(0, 18));
  const std::string python = nn::test::referencePython();
  if (python.empty()) NN_SKIP("TensorBoard is not installed (tools/reference-venv.sh); the framing was checked");
  for (const std::string& run : {clipped, free}) {
    int norms = 0;
    for (const std::string& line : tensorboardScalars(python, run))
      if (line.rfind("train/grad_norm ", 0) == 0) {
        ++norms;
        std::istringstream in(line.substr(16));
        int64_t step;
        double norm;
        in >> step >> norm;
        CHECK(norm > 0.05);  // the norm before clipping: LeNet's gradients are larger than that
        CHECK(std::isfinite(norm));
      }
    CHECK(norms == 4);
  }
}
