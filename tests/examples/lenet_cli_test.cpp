// The LeNet example against misuse: numbers on the command line, paths it cannot write, a FIFO
// for a data file, SIGTERM, metrics that stay valid JSON, a checkpoint whose parameters are not
// finite. It runs as a child process on small synthetic data.
#include <signal.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "nn/nn.h"
#include "tests/support/ExampleRun.h"
#include "tests/support/TempDir.h"

namespace fs = std::filesystem;
using nn::test::fileBytes;
using nn::test::runExample;

namespace {

// The data of a small run: 64 training and 32 test images.
struct Data {
  Data() {
    nn::test::writeSyntheticSplit(dir, "train", 64, 1);
    nn::test::writeSyntheticSplit(dir, "t10k", 32, 2);
  }
  std::vector<std::string> args(std::vector<std::string> more) const {
    more.insert(more.begin(), {"--data-dir", dir.path(), "--batch-size", "32"});
    return more;
  }
  nn::test::TempDir dir;
};

// The metrics file's lines, each parsed as JSON (a line that is not fails the test).
std::vector<nlohmann::json> metricsLines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(fileBytes(path));
  for (std::string line; std::getline(in, line);) {
    INFO(line);
    REQUIRE_NOTHROW(out.push_back(nlohmann::json::parse(line)));
  }
  return out;
}

}  // namespace

TEST_CASE("the example refuses malformed and out-of-range numbers, naming the flag and the value", "[lenet]") {
  // Each is refused before anything loads: the flag, and the value as given, in the message.
  const std::vector<std::pair<std::string, std::string>> bad{{"--lr", ""},
                                                             {"--lr", "1e39"},
                                                             {"--lr", "nan"},
                                                             {"--lr", "0x2"},
                                                             {"--lr", "-0.1"},
                                                             {"--epochs", "1e10"},
                                                             {"--epochs", "0x2"},
                                                             {"--epochs", "0"},
                                                             {"--epochs", "-3"},
                                                             {"--epochs", "2147483648"},
                                                             {"--limit", "1e19"},
                                                             {"--limit", "99999999999999999999"},
                                                             {"--seed", "18446744073709551616"},
                                                             {"--seed", "1.5"},
                                                             {"--batch-size", " 32"},
                                                             {"--threads", "100000"},
                                                             {"--bucket-mb", "0"},
                                                             {"--momentum", "inf"}};
  for (const auto& [flag, value] : bad) {
    CAPTURE(flag, value);
    const nn::test::ExampleResult run = runExample({flag, value, "--data-dir", "/nonexistent"});
    CHECK(run.exitStatus == 1);
    CHECK(run.stderrText.find("lenet: " + flag + " expects") != std::string::npos);
    CHECK(run.stderrText.find("'" + value + "'") != std::string::npos);
  }
  // An optimizer that is not one, and SGD's momentum with another.
  const nn::test::ExampleResult optimizer = runExample({"--optimizer", "lamb", "--data-dir", "/nonexistent"});
  CHECK(optimizer.exitStatus == 1);
  CHECK(optimizer.stderrText.find("lenet: --optimizer expects sgd, adam, adamw, adagrad or rmsprop, got 'lamb'") !=
        std::string::npos);
  const nn::test::ExampleResult momentum =
      runExample({"--optimizer", "adam", "--momentum", "0.5", "--data-dir", "/nonexistent"});
  CHECK(momentum.exitStatus == 1);
  CHECK(momentum.stderrText.find("--momentum applies to --optimizer sgd only") != std::string::npos);
  const nn::test::ExampleResult threads = runExample({"--threads", "100000"});
  CHECK(threads.stderrText.find("from 1 to 256") != std::string::npos);
  // The largest seed is a seed: the run gets as far as the missing data.
  const nn::test::ExampleResult seed = runExample({"--seed", "18446744073709551615", "--data-dir", "/nonexistent"});
  CHECK(seed.stderrText.find("/nonexistent") != std::string::npos);
  CHECK(seed.stderrText.find("--seed") == std::string::npos);
}

TEST_CASE("a --save or --metrics path that cannot be written fails before training", "[lenet]") {
  Data data;
  for (const std::string& path : {data.dir.file("missing/model.safetensors"), data.dir.path()}) {
    CAPTURE(path);
    const auto start = std::chrono::steady_clock::now();
    const nn::test::ExampleResult run = runExample(data.args({"--epochs", "50", "--save", path}));
    CHECK(run.exitStatus == 1);
    CHECK(run.stderrText.find(path + ": cannot save there") != std::string::npos);
    CHECK(run.stdoutText.find("epoch 1") == std::string::npos);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  }
  const nn::test::ExampleResult metrics = runExample(data.args({"--metrics", data.dir.file("missing/metrics.jsonl")}));
  CHECK(metrics.exitStatus == 1);
  CHECK(metrics.stderrText.find("cannot write there") != std::string::npos);
}

TEST_CASE("learning-rate schedule flags that cannot apply are refused, naming them", "[lenet]") {
  Data data;
  for (const auto& [flags, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--lr-schedule", "warm"},
            "--lr-schedule expects none, step, multistep, exponential, cosine, onecycle or "
            "plateau, got 'warm'"},
           {{"--lr-schedule", "multistep"}, "--lr-schedule multistep needs --lr-milestones"},
           {{"--epochs", "2", "--warmup-epochs", "2"}, "--warmup-epochs 2 leaves none of the 2 epochs"},
           {{"--lr-schedule", "onecycle", "--warmup-epochs", "1"},
            "--warmup-epochs does not apply to --lr-schedule "
            "onecycle"},
           {{"--lr-milestones", "3,x"}, "--lr-milestones"}}) {
    CAPTURE(flags[0], flags[1]);
    const nn::test::ExampleResult run = runExample(data.args(flags));
    CHECK(run.exitStatus == 1);
    CHECK(run.stderrText.find(message) != std::string::npos);
  }
}

TEST_CASE("--accumulate: micro-batches whose gradients add up to the batch's train as the batch does", "[lenet]") {
  Data data;
  // Batches of 30 (the last of 64 samples: 4) cut into 4 micro-batches of 8, 8, 7 and 7.
  auto epochLine = [](const std::string& out) { return out.substr(out.find("epoch 2  train loss"), 48); };
  const nn::test::ExampleResult whole =
      runExample({"--data-dir", data.dir.path(), "--batch-size", "30", "--epochs", "2"});
  const nn::test::ExampleResult parts =
      runExample({"--data-dir", data.dir.path(), "--batch-size", "30", "--epochs", "2", "--accumulate", "4"});
  REQUIRE(whole.exitStatus == 0);
  REQUIRE(parts.exitStatus == 0);
  // The same loss and accuracy to the printed digits (LeNet has no batch normalisation, whose
  // statistics would be the micro-batches').
  CHECK(epochLine(parts.stdoutText) == epochLine(whole.stdoutText));
}

TEST_CASE("--batch-thread: the batches made on a thread of their own or not train alike", "[lenet]") {
  Data data;
  auto epochLine = [](const std::string& out) { return out.substr(out.find("epoch 2  train loss"), 48); };
  auto run = [&](const char* where) {
    return runExample(data.args({"--epochs", "2", "--devices", "cpu:0,cpu:1", "--batch-thread", where}));
  };
  const nn::test::ExampleResult on = run("on"), off = run("off"), automatic = run("auto");
  REQUIRE(on.exitStatus == 0);
  REQUIRE(off.exitStatus == 0);
  REQUIRE(automatic.exitStatus == 0);
  CHECK(on.stdoutText.find("the next batch made on a thread of its own (--batch-thread on)") != std::string::npos);
  CHECK(off.stdoutText.find("the next batch made on the training thread (--batch-thread off)") != std::string::npos);
  CHECK(automatic.stdoutText.find("(--batch-thread auto)") != std::string::npos);
  CHECK(epochLine(off.stdoutText) == epochLine(on.stdoutText));
  CHECK(epochLine(automatic.stdoutText) == epochLine(on.stdoutText));
  const nn::test::ExampleResult bad = runExample(data.args({"--batch-thread", "sometimes"}));
  CHECK(bad.exitStatus == 1);
  CHECK(bad.stderrText.find("--batch-thread expects auto, on or off, got 'sometimes'") != std::string::npos);
  const nn::test::ExampleResult reduce = runExample(data.args({"--reduce-dtype", "fp16"}));
  CHECK(reduce.exitStatus == 1);
  CHECK(reduce.stderrText.find("--reduce-dtype expects fp32 or bf16, got 'fp16'") != std::string::npos);
}

TEST_CASE("two outputs naming one file are refused before anything is written", "[lenet]") {
  Data data;
  const std::string checkpoint = data.dir.file("model.safetensors"), link = data.dir.file("link.safetensors");
  REQUIRE(runExample(data.args({"--epochs", "1", "--save", checkpoint})).exitStatus == 0);
  const std::string saved = fileBytes(checkpoint);
  fs::create_symlink(checkpoint, link);
  const std::string unwritten = data.dir.file("new.safetensors");
  for (const auto& flags :
       std::vector<std::vector<std::string>>{{"--save", checkpoint, "--metrics", checkpoint},
                                             {"--save", checkpoint, "--export-onnx", link},
                                             {"--export-onnx", checkpoint, "--resume", checkpoint},
                                             {"--metrics", checkpoint, "--resume", link},
                                             {"--metrics", unwritten, "--export-onnx", unwritten}}) {
    CAPTURE(flags[0], flags[1], flags[2], flags[3]);
    std::vector<std::string> args{"--epochs", "2"};
    args.insert(args.end(), flags.begin(), flags.end());
    const nn::test::ExampleResult run = runExample(data.args(args));
    CHECK(run.exitStatus == 1);
    CHECK(run.stderrText.find(flags[0] + " " + flags[1] + " and " + flags[2] + " " + flags[3] + " are one file") !=
          std::string::npos);
    CHECK(run.stdoutText.find("epoch 1") == std::string::npos);
  }
  CHECK(fileBytes(checkpoint) == saved);
  CHECK_FALSE(fs::exists(unwritten));
  // A checkpoint continued in place is one file on purpose.
  CHECK(runExample(data.args({"--epochs", "2", "--resume", link, "--save", checkpoint})).exitStatus == 0);
}

TEST_CASE("a FIFO in place of a data file is refused at once, not read for ever", "[lenet]") {
  Data data;
  fs::remove(data.dir.file("train-images-idx3-ubyte"));
  REQUIRE(mkfifo(data.dir.file("train-images-idx3-ubyte").c_str(), 0600) == 0);
  const nn::test::ExampleResult run = runExample(data.args({}), {}, 30);
  CHECK(run.exitStatus == 1);
  CHECK(run.stderrText.find("not a regular file") != std::string::npos);
}

TEST_CASE("metrics are appended as valid JSON, and a resume on an epoch's last step reports its loss",
          "[lenet][noemulator]") {
  // One step an epoch, long enough (4096 images, batch 4096) for the signal to land in it.
  // Interrupted during that step, the run writes its checkpoint after it: the epoch's only
  // step is done, and the resumed run has none left. Its loss must still be the epoch's (it
  // was NaN, written as -nan, which is not JSON).
  nn::test::TempDir dir;
  nn::test::writeSyntheticSplit(dir, "train", 4096, 3);
  nn::test::writeSyntheticSplit(dir, "t10k", 32, 2);
  const std::string checkpoint = dir.file("model.safetensors");
  const std::string metrics = dir.file("metrics.jsonl");
  auto oneStep = [&](const std::string& metricsPath, std::vector<std::string> more) {
    more.insert(more.begin(),
                {"--data-dir", dir.path(), "--batch-size", "4096", "--epochs", "1", "--metrics", metricsPath});
    return more;
  };
  nn::test::SignalPlan plan;
  plan.signal = SIGINT;
  plan.afterOutput = "nn.Sequential";  // the model is printed once the handler is installed
  const nn::test::ExampleResult stopped = runExample(oneStep(metrics, {"--save", checkpoint}), plan);
  REQUIRE(stopped.exitStatus == 130);
  REQUIRE(nn::readSafetensorsMetadata(checkpoint).at("training.epoch_steps") == "1");
  REQUIRE(runExample(oneStep(metrics, {"--resume", checkpoint})).exitStatus == 0);
  const std::string straight = dir.file("straight.jsonl");
  const std::vector<std::string> uninterrupted = oneStep(straight, {});
  REQUIRE(runExample(uninterrupted).exitStatus == 0);
  const std::vector<nlohmann::json> resumed = metricsLines(metrics), reference = metricsLines(straight);
  REQUIRE(resumed.size() == 1);
  REQUIRE(reference.size() == 1);
  REQUIRE(resumed[0]["train_loss"].is_number());
  CHECK(resumed[0]["train_loss"] == reference[0]["train_loss"]);
  // A second run appends its line to what is there.
  REQUIRE(runExample(uninterrupted).exitStatus == 0);
  CHECK(metricsLines(straight).size() == 2);
  // Through a symbolic link, the link stays and its target grows.
  fs::create_symlink(straight, dir.file("link.jsonl"));
  REQUIRE(runExample(oneStep(dir.file("link.jsonl"), {})).exitStatus == 0);
  CHECK(fs::is_symlink(dir.file("link.jsonl")));
  CHECK(metricsLines(straight).size() == 3);
}

TEST_CASE("a checkpoint whose parameters are not finite goes beside the last good one", "[lenet]") {
  Data data;
  const std::string checkpoint = data.dir.file("model.safetensors");
  REQUIRE(runExample(data.args({"--epochs", "1", "--save", checkpoint})).exitStatus == 0);
  const std::string good = fileBytes(checkpoint);
  // A learning rate of 1e30 sends the weights to infinity and NaN within the epoch's two steps.
  const nn::test::ExampleResult run =
      runExample(data.args({"--epochs", "2", "--lr", "1e30", "--resume", checkpoint, "--save", checkpoint}));
  CHECK(run.exitStatus == 0);
  CHECK(run.stderrText.find("NaN or infinite") != std::string::npos);
  CHECK(fileBytes(checkpoint) == good);
  CHECK(fs::exists(checkpoint + ".nonfinite"));
}

TEST_CASE("--autocast and --loss-scale: refused values named; float16 scales the loss and checkpoints its scale",
          "[lenet]") {
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--autocast", "fp8"}, {"--loss-scale", "0"}, {"--loss-scale", "1e39"}, {"--loss-scale", "static"}}) {
    CAPTURE(flag, value);
    const nn::test::ExampleResult run = runExample({flag, value, "--data-dir", "/nonexistent"});
    CHECK(run.exitStatus == 1);
    CHECK(run.stderrText.find("lenet: " + flag + " expects") != std::string::npos);
    CHECK(run.stderrText.find("'" + value + "'") != std::string::npos);
  }
  Data data;
  // float16: dynamic loss scaling by default, its state in the checkpoint; bfloat16: none.
  const std::string half = data.dir.file("half.safetensors"), bf16 = data.dir.file("bf16.safetensors");
  const nn::test::ExampleResult fp16 = runExample(data.args({"--epochs", "1", "--autocast", "fp16", "--save", half}));
  REQUIRE(fp16.exitStatus == 0);
  CHECK(fp16.stdoutText.find("autocast float16, loss scale dynamic") != std::string::npos);
  CHECK(fp16.stderrText.find("autocast float16") != std::string::npos);
  const nn::Metadata halfMetadata = nn::readSafetensors(half).metadata;
  CHECK(halfMetadata.count("training.grad_scaler.scale") == 1);
  CHECK(halfMetadata.at("training.grad_scaler.growth_tracker") == "2");  // two good steps of 32 images
  const nn::test::ExampleResult bfloat =
      runExample(data.args({"--epochs", "1", "--autocast", "bf16", "--save", bf16}));
  REQUIRE(bfloat.exitStatus == 0);
  CHECK(bfloat.stdoutText.find("autocast bfloat16, loss scale off") != std::string::npos);
  CHECK(nn::readSafetensors(bf16).metadata.count("training.grad_scaler.scale") == 0);
}
