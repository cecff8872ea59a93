// The LeNet example resumes exactly: a run stopped after an epoch, or by Ctrl-C or SIGTERM
// mid-epoch, and resumed ends with the same bytes as an uninterrupted run; a checkpoint saved on
// two devices resumes on one. The example runs as a child process on small synthetic data.
#include <signal.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "nn/nn.h"
#include "tests/support/ExampleRun.h"
#include "tests/support/GradCheck.h"
#include "tests/support/TempDir.h"

using nn::test::fileBytes;
using nn::test::runExample;

namespace {

// The line the example prints when it resumes: proof that it did not start afresh.
std::string resumedLine(const std::string& path, int epochs) {
  return "resumed from " + path + " after " + std::to_string(epochs) + " epoch(s)";
}

// The tensors of a file by name.
std::map<std::string, nn::Tensor> byName(const nn::SafetensorsContents& contents) {
  std::map<std::string, nn::Tensor> out;
  for (const nn::NamedTensor& t : contents.tensors) out.emplace(t.name, t.value);
  return out;
}

}  // namespace

TEST_CASE(
    "a resumed run with Adam, AdamW, Adagrad or RMSprop ends bit-identical to an uninterrupted one, and refuses "
    "another optimizer's checkpoint",
    "[resume][noemulator]") {
  nn::test::TempDir dir;
  nn::test::writeSyntheticSplit(dir, "train", 300, 1);
  nn::test::writeSyntheticSplit(dir, "t10k", 50, 2);
  for (const std::string optimizer : {"adam", "adamw", "adagrad", "rmsprop"}) {
    CAPTURE(optimizer);
    const std::vector<std::string> common{"--data-dir", dir.path(), "--batch-size", "32", "--optimizer", optimizer};
    auto with = [&](std::vector<std::string> more) {
      more.insert(more.begin(), common.begin(), common.end());
      return more;
    };
    const std::string straight = dir.file(optimizer + "-straight.safetensors");
    REQUIRE(runExample(with({"--epochs", "2", "--save", straight})).exitStatus == 0);
    REQUIRE(nn::readSafetensorsMetadata(straight).at("training.optimizer") == optimizer);
    const std::string resumed = dir.file(optimizer + "-resumed.safetensors");
    REQUIRE(runExample(with({"--epochs", "1", "--save", resumed})).exitStatus == 0);
    REQUIRE(fileBytes(resumed) != fileBytes(straight));
    const nn::test::ExampleResult run = runExample(with({"--epochs", "2", "--resume", resumed, "--save", resumed}));
    REQUIRE(run.exitStatus == 0);
    CHECK(run.stdoutText.find(resumedLine(resumed, 1)) != std::string::npos);
    REQUIRE(fileBytes(resumed) == fileBytes(straight));
    // SGD resuming this run's checkpoint: refused, naming both.
    const nn::test::ExampleResult sgd =
        runExample({"--data-dir", dir.path(), "--batch-size", "32", "--epochs", "3", "--resume", straight});
    CHECK(sgd.exitStatus == 1);
    CHECK(sgd.stderrText.find("optimizer '" + optimizer + "', the run uses 'sgd'") != std::string::npos);
  }
}

TEST_CASE(
    "a run with a learning-rate schedule (with clipping and an average of the weights) resumes bit-identical, "
    "and another schedule's checkpoint is refused",
    "[resume][noemulator]") {
  nn::test::TempDir dir;
  nn::test::writeSyntheticSplit(dir, "train", 300, 1);
  nn::test::writeSyntheticSplit(dir, "t10k", 50, 2);
  for (const std::vector<std::string>& schedule :
       {std::vector<std::string>{"--lr-schedule", "cosine", "--warmup-epochs", "1", "--clip-grad-norm", "1", "--ema",
                                 "0.9"},
        std::vector<std::string>{"--lr-schedule", "onecycle"},
        std::vector<std::string>{"--lr-schedule", "plateau", "--lr-gamma", "0.5"}}) {
    CAPTURE(schedule[1]);
    auto with = [&](std::vector<std::string> more) {
      more.insert(more.begin(), {"--data-dir", dir.path(), "--batch-size", "32"});
      more.insert(more.end(), schedule.begin(), schedule.end());
      return more;
    };
    const std::string straight = dir.file(schedule[1] + "-straight.safetensors");
    const std::string metrics = dir.file(schedule[1] + ".jsonl");
    REQUIRE(runExample(with({"--epochs", "4", "--save", straight, "--metrics", metrics})).exitStatus == 0);
    // Stopped by SIGTERM in the third epoch (a run of fewer --epochs would have another
    // one-cycle schedule), then resumed.
    const std::string resumed = dir.file(schedule[1] + "-resumed.safetensors");
    nn::test::SignalPlan stop;
    stop.signal = SIGTERM;
    stop.afterFile = resumed;
    stop.afterOutput = "epoch 2  train loss";
    const nn::test::ExampleResult stopped = runExample(with({"--epochs", "4", "--save", resumed}), stop);
    REQUIRE(stopped.stdoutText.find("epoch 4  train loss") == std::string::npos);
    const nn::test::ExampleResult run = runExample(with({"--epochs", "4", "--resume", resumed, "--save", resumed}));
    REQUIRE(run.exitStatus == 0);
    CHECK(run.stdoutText.find("resumed from " + resumed) != std::string::npos);
    CHECK(fileBytes(resumed) == fileBytes(straight));
    // The rate changed over the epochs: the schedule ran.
    std::set<double> rates;
    std::istringstream lines(fileBytes(metrics));
    for (std::string line; std::getline(lines, line);) {
      const size_t at = line.find("\"learning_rate\": ");
      REQUIRE(at != std::string::npos);
      rates.insert(std::stod(line.substr(at + 17)));
    }
    // (A plateau's loss that keeps falling leaves its rate as it is.)
    if (schedule[1] != "plateau") CHECK(rates.size() >= 2);
    CHECK(nn::readSafetensorsMetadata(straight).at("training.scheduler") == (schedule[1] == "onecycle" ? "OneCycleLR"
                                                                             : schedule[1] == "plateau"
                                                                                 ? "ReduceLROnPlateau"
                                                                                 : "SequentialLR"));
  }
  // Resuming a cosine schedule's checkpoint without a schedule, or with another, is refused.
  const std::string cosine = dir.file("cosine-straight.safetensors");
  const nn::test::ExampleResult none =
      runExample({"--data-dir", dir.path(), "--batch-size", "32", "--epochs", "5", "--resume", cosine});
  CHECK(none.exitStatus == 1);
  CHECK(none.stderrText.find("the checkpoint holds the learning-rate schedule 'SequentialLR', the run uses 'none'") !=
        std::string::npos);
  const nn::test::ExampleResult other = runExample({"--data-dir", dir.path(), "--batch-size", "32", "--epochs", "5",
                                                    "--resume", cosine, "--lr-schedule", "onecycle"});
  CHECK(other.exitStatus == 1);
  CHECK(other.stderrText.find("'SequentialLR', the run uses 'OneCycleLR'") != std::string::npos);
  // Its average of the weights: the run must keep one of the same decay.
  const std::vector<std::string> cosineFlags{"--data-dir",    dir.path(), "--batch-size",    "32",
                                             "--epochs",      "5",        "--resume",        cosine,
                                             "--lr-schedule", "cosine",   "--warmup-epochs", "1"};
  const nn::test::ExampleResult noAverage = runExample(cosineFlags);
  CHECK(noAverage.stderrText.find("the checkpoint holds an average of the weights, the run keeps none") !=
        std::string::npos);
  std::vector<std::string> otherDecay = cosineFlags;
  otherDecay.insert(otherDecay.end(), {"--ema", "0.5"});
  CHECK(
      runExample(otherDecay).stderrText.find("averages the weights with decay 0.90000000000000002, the run with 0.5") !=
      std::string::npos);
}

TEST_CASE("another network's checkpoint is refused as such, before its optimizer state is looked at", "[resume]") {
  nn::test::TempDir dir;
  nn::test::writeSyntheticSplit(dir, "train", 64, 1);
  nn::test::writeSyntheticSplit(dir, "t10k", 32, 2);
  const std::string lenet = dir.file("lenet.safetensors");
  REQUIRE(runExample({"--data-dir", dir.path(), "--batch-size", "32", "--epochs", "1", "--save", lenet}).exitStatus ==
          0);
  // The residual network resuming LeNet's checkpoint: it said the momentum buffer's size.
  const nn::test::ExampleResult run =
      runExample("resnet", {"--data-dir", dir.path(), "--batch-size", "32", "--epochs", "2", "--resume", lenet});
  INFO(run.stderrText);
  CHECK(run.exitStatus == 1);
  CHECK(run.stderrText.find(lenet + ": the checkpoint holds another network than this one: tensor '") !=
        std::string::npos);
  CHECK(run.stderrText.find("parameters") == std::string::npos);
}

TEST_CASE("a resumed run ends bit-identical to an uninterrupted one", "[resume][noemulator]") {
  nn::test::TempDir dir;
  nn::test::writeSyntheticSplit(dir, "train", 600, 1);
  nn::test::writeSyntheticSplit(dir, "t10k", 100, 2);
  const std::vector<std::string> common{"--data-dir", dir.path(), "--batch-size", "32"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), common.begin(), common.end());
    return more;
  };
  const std::string straight = dir.file("straight.safetensors");
  REQUIRE(runExample(with({"--epochs", "3", "--save", straight})).exitStatus == 0);

  SECTION("stopped after an epoch") {
    const std::string resumed = dir.file("resumed.safetensors");
    REQUIRE(runExample(with({"--epochs", "1", "--save", resumed})).exitStatus == 0);
    REQUIRE(fileBytes(resumed) != fileBytes(straight));
    // A copy whose weights were changed must end elsewhere: the run continues from the file,
    // it does not train afresh from the same seed.
    const std::string altered = dir.file("altered.safetensors");
    nn::SafetensorsContents contents = nn::readSafetensors(resumed);
    for (nn::NamedTensor& t : contents.tensors)
      if (t.name == "0.weight") t.value.mul_(0.5f);
    nn::writeSafetensors(altered, contents.tensors, contents.metadata);
    const nn::test::ExampleResult run = runExample(with({"--epochs", "3", "--resume", resumed, "--save", resumed}));
    REQUIRE(run.exitStatus == 0);
    CHECK(run.stdoutText.find(resumedLine(resumed, 1)) != std::string::npos);
    REQUIRE(fileBytes(resumed) == fileBytes(straight));
    REQUIRE(runExample(with({"--epochs", "3", "--resume", altered, "--save", altered})).exitStatus == 0);
    CHECK(fileBytes(altered) != fileBytes(straight));
  }

  for (const int signal : {SIGINT, SIGTERM}) {
    DYNAMIC_SECTION("stopped by " << (signal == SIGINT ? "Ctrl-C" : "SIGTERM") << " in the middle of an epoch") {
      const std::string resumed = dir.file("interrupted.safetensors");
      // The signal comes once the first epoch's checkpoint exists: in the middle of epoch 2 or
      // later. The example finishes its step, writes the checkpoint and exits 128 + signal,
      // which a death by the signal would not give.
      nn::test::SignalPlan plan;
      plan.signal = signal;
      plan.afterFile = resumed;
      plan.delaySeconds = 0.05;
      const nn::test::ExampleResult stopped = runExample(with({"--epochs", "30", "--save", resumed}), plan);
      REQUIRE(stopped.killedBy == 0);
      REQUIRE(stopped.exitStatus == 128 + signal);
      const nn::Metadata m = nn::readSafetensorsMetadata(resumed);
      INFO("stopped after " << m.at("training.epochs_done") << " epochs at sample " << m.at("training.data_position"));
      REQUIRE(m.at("training.data_position") != "0");
      // Resuming to the epoch count of the interrupted run's checkpoint + 1 and comparing with a
      // straight run to that count checks the mid-epoch continuation.
      const int done = std::stoi(m.at("training.epochs_done"));
      const std::string epochs = std::to_string(done + 1);
      const std::string reference = dir.file("reference.safetensors");
      REQUIRE(runExample(with({"--epochs", epochs, "--save", reference})).exitStatus == 0);
      const nn::test::ExampleResult run =
          runExample(with({"--epochs", epochs, "--resume", resumed, "--save", resumed}));
      REQUIRE(run.exitStatus == 0);
      CHECK(run.stdoutText.find(resumedLine(resumed, done) + " and some steps of the next") != std::string::npos);
      REQUIRE(fileBytes(resumed) == fileBytes(reference));
    }
  }

  SECTION("a checkpoint from two devices resumes on one") {
    const std::string two = dir.file("two.safetensors");
    REQUIRE(runExample(with({"--epochs", "1", "--devices", "cpu:0,cpu:1", "--save", two})).exitStatus == 0);
    const nn::test::ExampleResult run = runExample(with({"--epochs", "3", "--resume", two, "--save", two}));
    REQUIRE(run.exitStatus == 0);
    CHECK(run.stdoutText.find(resumedLine(two, 1)) != std::string::npos);
    // The same tensors by name, the same data order and metadata (steps, data position,
    // generator, module tree); two devices sum a batch's gradient in another order, so the
    // values agree to rounding only, which three epochs of SGD amplify.
    const nn::SafetensorsContents a = nn::readSafetensors(two), b = nn::readSafetensors(straight);
    for (const auto& [key, value] : b.metadata) {
      CAPTURE(key, value);
      CHECK(a.metadata.count(key) == 1);
      if (a.metadata.count(key) == 1) CHECK(a.metadata.at(key) == value);
    }
    CHECK(a.metadata.size() == b.metadata.size());
    const std::map<std::string, nn::Tensor> ta = byName(a), tb = byName(b);
    REQUIRE(ta.size() == tb.size());
    for (const auto& [name, value] : ta) {
      CAPTURE(name);
      REQUIRE(tb.count(name) == 1);
      REQUIRE(value.sizes() == tb.at(name).sizes());
      if (name == "training.permutation")
        CHECK(value.toVector() == tb.at(name).toVector());
      else
        CHECK(nn::test::maxAbsDiff(value, tb.at(name)) < 1e-3);
    }
  }
}
