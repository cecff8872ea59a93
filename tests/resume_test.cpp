// The LeNet example resumes exactly: a run stopped after an epoch, or by Ctrl-C mid-epoch,
// and resumed ends with the same bytes as an uninterrupted run; a checkpoint saved on two
// devices resumes on one. The example runs as a child process on small synthetic data.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include "nn/nn.h"
#include "tests/GradCheck.h"
#include "tests/TempDir.h"

namespace {

void writeIdx(const std::string& path, const std::vector<uint32_t>& sizes, const std::vector<uint8_t>& data) {
  std::ofstream out(path, std::ios::binary);
  const uint8_t magic[4] = {0, 0, 0x08, static_cast<uint8_t>(sizes.size())};
  out.write(reinterpret_cast<const char*>(magic), 4);
  for (uint32_t s : sizes)
    for (int shift = 24; shift >= 0; shift -= 8) out.put(static_cast<char>((s >> shift) & 0xff));
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

// A learnable data set: class c is a bright horizontal band at rows 2c..2c+3, plus noise.
void writeSplit(const nn::test::TempDir& dir, const std::string& prefix, uint32_t n, uint32_t seed) {
  nn::Generator g(seed);
  std::vector<uint8_t> pixels(n * 28 * 28), labels(n);
  for (uint32_t i = 0; i < n; ++i) {
    labels[i] = static_cast<uint8_t>(g.below(10));
    for (uint32_t r = 0; r < 28; ++r)
      for (uint32_t c = 0; c < 28; ++c) {
        const bool band = r >= 2u * labels[i] && r < 2u * labels[i] + 4;
        pixels[(i * 28 + r) * 28 + c] = static_cast<uint8_t>((band ? 160 : 0) + g.below(90));
      }
  }
  writeIdx(dir.file(prefix + "-images-idx3-ubyte"), {n, 28, 28}, pixels);
  writeIdx(dir.file(prefix + "-labels-idx1-ubyte"), {n}, labels);
}

// Runs the example with `args`; returns its exit status. With interruptAfter > 0, sends it
// SIGINT once that many seconds have passed.
int lenet(const std::vector<std::string>& args, double interruptAfter = 0) {
  std::vector<std::string> all{"examples/lenet"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (interruptAfter > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(interruptAfter));
    kill(child, SIGINT);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("a resumed run ends bit-identical to an uninterrupted one", "[resume]") {
  nn::test::TempDir dir;
  writeSplit(dir, "train", 600, 1);
  writeSplit(dir, "t10k", 100, 2);
  const std::vector<std::string> common{"--data-dir", dir.path(), "--batch-size", "32"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), common.begin(), common.end());
    return more;
  };
  const std::string straight = dir.file("straight.safetensors");
  REQUIRE(lenet(with({"--epochs", "3", "--save", straight})) == 0);

  SECTION("stopped after an epoch") {
    const std::string resumed = dir.file("resumed.safetensors");
    REQUIRE(lenet(with({"--epochs", "1", "--save", resumed})) == 0);
    REQUIRE(bytes(resumed) != bytes(straight));
    REQUIRE(lenet(with({"--epochs", "3", "--resume", resumed, "--save", resumed})) == 0);
    REQUIRE(bytes(resumed) == bytes(straight));
  }

  SECTION("interrupted by Ctrl-C in the middle of an epoch") {
    const std::string resumed = dir.file("interrupted.safetensors");
    // Train long enough to be interrupted: 30 epochs would take many seconds.
    const int status = lenet(with({"--epochs", "30", "--save", resumed}), 1.5);
    REQUIRE(status == 130);
    const nn::Metadata m = nn::readSafetensorsMetadata(resumed);
    INFO("interrupted after " << m.at("training.epochs_done") << " epochs at sample " << m.at("training.data_position"));
    REQUIRE(m.at("training.data_position") != "0");
    // Resuming to the epoch count of the interrupted run's checkpoint + 1 and comparing
    // with a straight run to that count checks the mid-epoch continuation.
    const int epochs = std::stoi(m.at("training.epochs_done")) + 1;
    const std::string reference = dir.file("reference.safetensors");
    REQUIRE(lenet(with({"--epochs", std::to_string(epochs), "--save", reference})) == 0);
    REQUIRE(lenet(with({"--epochs", std::to_string(epochs), "--resume", resumed, "--save", resumed})) == 0);
    REQUIRE(bytes(resumed) == bytes(reference));
  }

  SECTION("a checkpoint from two devices resumes on one") {
    const std::string two = dir.file("two.safetensors");
    REQUIRE(lenet(with({"--epochs", "1", "--devices", "cpu:0,cpu:1", "--save", two})) == 0);
    REQUIRE(lenet(with({"--epochs", "3", "--resume", two, "--save", two})) == 0);
    // Two devices sum gradients in another order, so the results agree to rounding only.
    auto a = nn::readSafetensors(two), b = nn::readSafetensors(straight);
    REQUIRE(a.tensors.size() == b.tensors.size());
    for (size_t i = 0; i < a.tensors.size(); ++i) {
      if (a.tensors[i].name == "training.permutation") continue;
      CAPTURE(a.tensors[i].name);
      REQUIRE(nn::test::maxAbsDiff(a.tensors[i].value, b.tensors[i].value) < 2e-3);
    }
  }
}
