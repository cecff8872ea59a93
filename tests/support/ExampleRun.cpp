// Test support: the LeNet example as a child process.
#include "tests/support/ExampleRun.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "nn/tensor/Random.h"

namespace nn::test {

namespace {

void writeIdx(const std::string& path, const std::vector<uint32_t>& sizes, const std::vector<uint8_t>& data) {
  std::ofstream out(path, std::ios::binary);
  const uint8_t magic[4] = {0, 0, 0x08, static_cast<uint8_t>(sizes.size())};
  out.write(reinterpret_cast<const char*>(magic), 4);
  for (uint32_t s : sizes)
    for (int shift = 24; shift >= 0; shift -= 8) out.put(static_cast<char>((s >> shift) & 0xff));
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace

void writeSyntheticSplit(const TempDir& dir, const std::string& prefix, uint32_t n, uint32_t seed) {
  Generator g(seed);
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

std::string fileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

ExampleResult runExample(const std::vector<std::string>& args, const SignalPlan& plan, double timeoutSeconds) {
  return runExample("lenet", args, plan, timeoutSeconds);
}

ExampleResult runExample(const std::string& example, const std::vector<std::string>& args, const SignalPlan& plan,
                         double timeoutSeconds) {
  std::vector<std::string> command{"examples/" + example};
  command.insert(command.end(), args.begin(), args.end());
  return runCommand(command, plan, timeoutSeconds);
}

ExampleResult runCommand(std::vector<std::string> all, const SignalPlan& plan, double timeoutSeconds) {
  TempDir logs;
  const std::string out = logs.file("stdout"), err = logs.file("stderr");
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (o >= 0) dup2(o, STDOUT_FILENO);
    if (e >= 0) dup2(e, STDERR_FILENO);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double>(timeoutSeconds);
  bool signalled = plan.signal == 0;
  int status = 0;
  while (true) {
    const pid_t done = waitpid(child, &status, WNOHANG);
    REQUIRE(done >= 0);
    if (done == child) break;
    if (clock::now() > deadline) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      FAIL("the example ran longer than " << timeoutSeconds << " s: " << fileBytes(err));
    }
    if (!signalled && (plan.afterFile.empty() || exists(plan.afterFile)) &&
        (plan.afterOutput.empty() || fileBytes(out).find(plan.afterOutput) != std::string::npos)) {
      std::this_thread::sleep_for(std::chrono::duration<double>(plan.delaySeconds));
      kill(child, plan.signal);
      signalled = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ExampleResult result;
  if (WIFEXITED(status)) result.exitStatus = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.killedBy = WTERMSIG(status);
  result.stdoutText = fileBytes(out);
  result.stderrText = fileBytes(err);
  return result;
}

}  // namespace nn::test
