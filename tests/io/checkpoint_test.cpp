// A writer killed at any moment of a save leaves the previous file whole: every kill point
// finds either the old or the new contents, never a mix or a truncated file. A corrupted
// checkpoint is an error naming it.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <thread>

#include "nn/nn.h"
#include "tests/support/TempDir.h"

namespace {

// Two versions of a file of 8 MB of floats: every value of version v is v.
std::vector<nn::NamedTensor> version(float v) { return {{"weights", nn::Tensor::full({2 * 1024 * 1024}, v)}}; }

// A Linear(2, 2) trained on 3 samples, and its checkpoint in a folder of its own.
struct SmallCheckpoint {
  SmallCheckpoint() { nn::saveCheckpoint(state, path); }
  nn::test::TempDir dir;
  const std::string path = dir.file("checkpoint.safetensors");
  std::shared_ptr<nn::Linear> model = std::make_shared<nn::Linear>(2, 2);
  nn::SGD sgd{model->getParameters()};
  nn::BatchIterator batches{nn::Tensor::zeros({3, 2}), nn::Tensor::zeros({3}), 2};
  nn::TrainingState state{model.get(), &sgd, &batches, 0};
};

}  // namespace

TEST_CASE("killing the writer at any point leaves the old file or the new, whole", "[checkpoint]") {
  nn::test::TempDir dir;
  const std::string path = dir.file("model.safetensors");
  nn::writeSafetensors(path, version(1), {{"version", "1"}});
  int sawOld = 0, sawNew = 0;
  bool replaced = false;
  for (int point = 0; point < 12; ++point) {
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      // Alternate versions 2 and 1 forever, so a kill lands in every phase of a save.
      for (int i = 0;; ++i) {
        const float v = i % 2 == 0 ? 2.f : 1.f;
        nn::writeSafetensors(path, version(v), {{"version", v == 2.f ? "2" : "1"}});
      }
    }
    // Until the kill, the file is watched: each look must find a whole version, and the writer
    // must be seen replacing it (a writer that never does would leave version 1 throughout).
    // The last kill waits for that, up to a minute: a slow machine or a sanitizer build may not
    // finish a save of 8 MB within the others' windows.
    const auto start = std::chrono::steady_clock::now();
    const auto until = start + std::chrono::milliseconds(3 + 7 * point);
    const auto latest = start + std::chrono::seconds(60);
    auto watching = [&] {
      const auto now = std::chrono::steady_clock::now();
      return now < until || (point == 11 && !replaced && now < latest);
    };
    while (watching()) {
      const std::string seen = nn::readSafetensorsMetadata(path).at("version");
      REQUIRE((seen == "1" || seen == "2"));
      replaced = replaced || seen == "2";
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    kill(child, SIGKILL);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(WIFSIGNALED(status));

    const nn::SafetensorsContents contents = nn::readSafetensors(path);
    const std::string v = contents.metadata.at("version");
    REQUIRE((v == "1" || v == "2"));
    const std::vector<float> values = contents.tensors.at(0).value.toVector();
    REQUIRE(values.size() == 2u * 1024 * 1024);
    const float expected = v == "1" ? 1.f : 2.f;
    size_t mismatches = 0;
    for (float x : values) mismatches += x != expected;
    REQUIRE(mismatches == 0);
    (v == "1" ? sawOld : sawNew)++;
  }
  INFO("old " << sawOld << ", new " << sawNew);
  REQUIRE(sawOld + sawNew == 12);
  REQUIRE((replaced || sawNew > 0));
}

TEST_CASE("a checkpoint whose data order holds no sample indices is an error naming the file", "[checkpoint]") {
  SmallCheckpoint small;
  const std::string& path = small.path;
  nn::TrainingState& state = small.state;
  const nn::SafetensorsContents saved = nn::readSafetensors(path);
  for (float index : {std::nanf(""), -1.f, 1e30f, 0.5f}) {
    INFO("index " << index);
    std::vector<nn::NamedTensor> tensors = saved.tensors;
    for (nn::NamedTensor& t : tensors)
      if (t.name == "training.permutation") t.value = nn::Tensor::fromVector({3}, {0, index, 2});
    nn::writeSafetensors(path, tensors, saved.metadata);
    // The conversion of such a float to an integer was undefined behaviour.
    REQUIRE_THROWS_WITH(nn::loadCheckpoint(state, path), Catch::Contains(path) &&
                                                             Catch::Contains("'training.permutation': element 1") &&
                                                             Catch::Contains("not a sample index"));
  }
}

TEST_CASE("a checkpoint whose counts are out of range is refused, not wrapped", "[checkpoint]") {
  SmallCheckpoint small;
  const std::string& path = small.path;
  nn::TrainingState& state = small.state;
  const nn::SafetensorsContents saved = nn::readSafetensors(path);
  // 4294967295 epochs once became -1 as an int, and training went on from epoch 0.
  const std::vector<std::pair<std::string, std::string>> crafted{
      {"training.epochs_done", "4294967295"}, {"training.epochs_done", "-1"},
      {"training.epochs_done", "1e3"},        {"training.steps", "99999999999999999999"},
      {"training.data_epoch", "2147483648"},  {"training.data_position", "4"}};
  for (const auto& [key, value] : crafted) {
    INFO(key << " = " << value);
    nn::Metadata metadata = saved.metadata;
    metadata[key] = value;
    nn::writeSafetensors(path, saved.tensors, metadata);
    REQUIRE_THROWS_WITH(nn::loadCheckpoint(state, path), Catch::Contains(path));
    CHECK(state.epochsDone == 0);
  }
  nn::Metadata metadata = saved.metadata;
  metadata["training.epochs_done"] = "2147483647";  // the largest count an int holds
  nn::writeSafetensors(path, saved.tensors, metadata);
  CHECK(nn::loadCheckpoint(state, path) == 2147483647);
}

TEST_CASE("a checkpoint of an earlier version (SGD's steps as training.sgd_steps) still loads", "[checkpoint]") {
  SmallCheckpoint small;
  const nn::SafetensorsContents saved = nn::readSafetensors(small.path);
  REQUIRE(saved.metadata.at("training.optimizer") == "sgd");
  nn::Metadata metadata = saved.metadata;
  metadata.erase("training.optimizer");
  metadata.erase("training.steps");
  metadata["training.sgd_steps"] = "7";
  nn::writeSafetensors(small.path, saved.tensors, metadata);
  nn::loadCheckpoint(small.state, small.path);
  REQUIRE(small.sgd.stepCount() == 7);
  metadata["training.sgd_steps"] = "99999999999999999999";
  nn::writeSafetensors(small.path, saved.tensors, metadata);
  REQUIRE_THROWS_WITH(nn::loadCheckpoint(small.state, small.path),
                      Catch::Contains(small.path) && Catch::Contains("training.sgd_steps"));
}

TEST_CASE("a checkpoint whose epoch counters contradict each other is refused, not resumed", "[checkpoint]") {
  SmallCheckpoint small;
  const std::string& path = small.path;
  nn::TrainingState& state = small.state;
  const nn::SafetensorsContents saved = nn::readSafetensors(path);
  // A loss of 5 summed over no steps reported a train loss of 7.14 once the epoch went on;
  // 3 steps of an epoch whose data order has given out 1 sample cannot have happened.
  const std::vector<std::vector<std::pair<std::string, std::string>>> crafted{
      {{"training.epoch_loss_sum", "5"}, {"training.epoch_steps", "0"}},
      {{"training.epoch_loss_sum", "-0.5"}},
      {{"training.epoch_loss_sum", "1.5"}, {"training.epoch_steps", "3"}, {"training.data_position", "1"}},
      {{"training.epoch_steps", "1"}, {"training.data_position", "0"}}};
  const std::vector<std::string> named{"'training.epoch_loss_sum' is 5 with 'training.epoch_steps' 0",
                                       "'training.epoch_loss_sum' is -0.5", "'training.epoch_steps' is 3",
                                       "'training.epoch_steps' is 1"};
  for (size_t i = 0; i < crafted.size(); ++i) {
    nn::Metadata metadata = saved.metadata;
    for (const auto& [key, value] : crafted[i]) metadata[key] = value;
    INFO(named[i]);
    nn::writeSafetensors(path, saved.tensors, metadata);
    CHECK_THROWS_WITH(nn::loadCheckpoint(state, path), Catch::Contains(path) && Catch::Contains(named[i]));
    CHECK(state.epochLossSum == 0);
    CHECK(state.epochSteps == 0);
  }
  // Counters that agree load: 2 steps of the 3 samples given out, their losses summed.
  nn::Metadata metadata = saved.metadata;
  metadata["training.epoch_loss_sum"] = "1.5";
  metadata["training.epoch_steps"] = "2";
  metadata["training.data_position"] = "3";
  nn::writeSafetensors(path, saved.tensors, metadata);
  nn::loadCheckpoint(state, path);
  CHECK(state.epochLossSum == 1.5);
  CHECK(state.epochSteps == 2);
}
