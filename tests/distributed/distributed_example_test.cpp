// The LeNet example under mpirun: 2 processes of half the batch train as one process on the
// whole batch, rank 0 alone prints and writes, and a checkpoint resumes on another number of
// processes; Ctrl-C stops every process, rank 0 saving; a rank with other flags, another build
// or other data is refused at the start. On small synthetic data; skipped where
// mpirun or the build's MPI is missing, failed there where NN_REQUIRE_MPI=1 (.ci/run) asks for it.
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/ExampleRun.h"
#include "tests/support/Skip.h"
#include "tests/support/TempDir.h"

using nn::test::runCommand;
using nn::test::runExample;

namespace {

// Why this test cannot run here, or "" where it can.
std::string missingMpi() {
  std::ifstream summary("external/mpi/summary.txt");
  std::string line;
  std::getline(summary, line);
  if (line.rfind("with MPI", 0) != 0) return "this build has no MPI (" + line + ")";
  if (std::system("command -v mpirun > /dev/null") != 0) return "no mpirun on PATH";
  return "";
}

// True where MPI runs here. Where it does not, the test case fails if NN_REQUIRE_MPI=1 says MPI
// must be there (.ci/run, which installs Open MPI), and is skipped with the reason otherwise.
bool mpiRunsHere() {
  const std::string why = missingMpi();
  if (why.empty()) return true;
  const char* required = std::getenv("NN_REQUIRE_MPI");
  if (required != nullptr && std::string(required) == "1") FAIL(why << ", and NN_REQUIRE_MPI=1 asks for MPI");
  nn::test::markSkipped(why);
  return false;
}

std::vector<std::string> mpirun(int processes) {
  std::vector<std::string> command{"mpirun", "--oversubscribe", "-np",   std::to_string(processes), "--mca",
                                   "btl",    "self,tcp",        "--mca", "btl_tcp_if_include",      "lo"};
  if (geteuid() == 0) command.push_back("--allow-run-as-root");
  command.push_back("examples/lenet");
  return command;
}

// mpirun with one process of `first`'s flags and one of `second`'s (Open MPI's MPMD form), the
// second running `program`.
std::vector<std::string> mpirunEach(const std::vector<std::string>& first, const std::vector<std::string>& second,
                                    const std::string& program = "examples/lenet") {
  std::vector<std::string> command = mpirun(1);
  command.insert(command.end(), first.begin(), first.end());
  for (const std::string& arg : {std::string(":"), std::string("-np"), std::string("1"), program})
    command.push_back(arg);
  command.insert(command.end(), second.begin(), second.end());
  return command;
}

// The numbers of the line "epoch N  train loss L  test accuracy A ..." for `epoch`.
std::pair<double, double> epochLine(const std::string& out, int epoch) {
  std::smatch m;
  const std::regex line("epoch " + std::to_string(epoch) + "  train loss ([0-9.]+)  test accuracy ([0-9.]+)");
  REQUIRE(std::regex_search(out, m, line));
  return {std::stod(m[1]), std::stod(m[2])};
}

// The environment of the processes mpirun starts, and synthetic data in `dir`.
void prepare(const nn::test::TempDir& dir) {
  // Open MPI's own allocations outlive the program, and its plugins are not instrumented: under
  // the sanitizers, the processes mpirun starts leave them alone (as tests/distributed/distributed_test.sh).
  if (const char* asan = std::getenv("ASAN_OPTIONS"))
    setenv("ASAN_OPTIONS", (std::string(asan) + ":detect_leaks=0").c_str(), 1);
  if (const char* tsan = std::getenv("TSAN_OPTIONS"))
    setenv("TSAN_OPTIONS", (std::string(tsan) + ":suppressions=tests/distributed/distributed_tsan.supp").c_str(), 1);
  const char* tmp = std::getenv("TEST_TMPDIR");
  setenv("HOME", tmp ? tmp : dir.path().c_str(), 0);
  setenv("TMPDIR", tmp ? tmp : dir.path().c_str(), 0);
  nn::test::writeSyntheticSplit(dir, "train", 300, 1);
  nn::test::writeSyntheticSplit(dir, "t10k", 50, 2);
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("LeNet under mpirun: 2 processes train as one on the global batch; checkpoints resume on 3 and on 1",
          "[distributed]") {
  if (!mpiRunsHere()) return;
  nn::test::TempDir dir;
  prepare(dir);
  const std::vector<std::string> common{"--data-dir", dir.path(), "--epochs", "2"};
  auto with = [&](std::vector<std::string> command, std::vector<std::string> more) {
    command.insert(command.end(), common.begin(), common.end());
    command.insert(command.end(), more.begin(), more.end());
    return command;
  };

  const nn::test::ExampleResult single = runExample(with({}, {"--batch-size", "32"}));
  REQUIRE(single.exitStatus == 0);
  const std::string saved = dir.file("two.safetensors");
  // Buckets of 0.25 MB (65,536 gradients): LeNet's 431,080 in 7, the 6 that hold the Linear
  // layers' gradients alone started before the convolutions' are computed.
  const nn::test::ExampleResult two =
      runCommand(with(mpirun(2), {"--batch-size", "16", "--bucket-mb", "0.25", "--save", saved}));
  INFO(two.stderrText);
  REQUIRE(two.exitStatus == 0);
  // Rank 0 alone prints: the model once, each epoch once.
  CHECK(count(two.stdoutText, "nn.DistributedDataParallelTable(rank 0 of 2)") == 1);
  CHECK(count(two.stdoutText, "epoch 2  train loss") == 1);
  for (int epoch : {1, 2}) {
    const auto [loss, accuracy] = epochLine(single.stdoutText, epoch);
    const auto [loss2, accuracy2] = epochLine(two.stdoutText, epoch);
    CHECK(loss2 == Approx(loss).margin(2e-4));           // the same steps; sums in other orders
    CHECK(accuracy2 == Approx(accuracy).margin(0.021));  // at most one of 50 images apart
  }

  // Resumed after its first epoch on 3 processes, and on 1.
  const std::string first = dir.file("first.safetensors");
  REQUIRE(runCommand(with(mpirun(2), {"--batch-size", "16", "--epochs", "1", "--save", first})).exitStatus == 0);
  const nn::test::ExampleResult three =
      runCommand(with(mpirun(3), {"--batch-size", "16", "--epochs", "2", "--resume", first}));
  INFO(three.stderrText);
  CHECK(three.exitStatus == 0);
  CHECK(count(three.stdoutText, "resumed from " + first + " after 1 epoch(s)") == 1);
  CHECK(count(three.stdoutText, "epoch 2  train loss") == 1);
  const nn::test::ExampleResult one = runExample(with({}, {"--batch-size", "32", "--resume", first}));
  CHECK(one.exitStatus == 0);
  CHECK(count(one.stdoutText, "epoch 2  train loss") == 1);
}

TEST_CASE("LeNet under mpirun: Ctrl-C stops every process after the same step, with a checkpoint that resumes",
          "[distributed]") {
  if (!mpiRunsHere()) return;
  nn::test::TempDir dir;
  prepare(dir);
  const std::string saved = dir.file("stopped.safetensors");
  // Ctrl-C reaches mpirun, which ends its processes with SIGTERM: each stops after the step that
  // every process has begun, rank 0 saves, and the job ends within the test's time.
  nn::test::SignalPlan plan;
  plan.signal = SIGINT;
  plan.afterFile = saved;
  plan.afterOutput = "epoch 1  train loss";
  std::vector<std::string> command = mpirun(2);
  for (const char* arg : {"--epochs", "1000", "--batch-size", "4"}) command.push_back(arg);
  for (const std::string& arg : {std::string("--data-dir"), dir.path(), std::string("--save"), saved})
    command.push_back(arg);
  const nn::test::ExampleResult stopped = runCommand(command, plan, 120);
  const std::string out = stopped.stdoutText + stopped.stderrText;
  INFO(out);
  CHECK(stopped.exitStatus != 0);
  CHECK(count(out, "checkpoint written to " + saved) == 1);
  std::smatch m;
  REQUIRE(std::regex_search(out, m, std::regex("stopped in epoch ([0-9]+) after")));
  REQUIRE(count(out, "stopped in epoch") == 1);  // rank 0 alone
  // One process finishes the stopped epoch from the checkpoint.
  const nn::test::ExampleResult resumed =
      runExample({"--data-dir", dir.path(), "--batch-size", "8", "--epochs", m[1].str(), "--resume", saved});
  INFO(resumed.stderrText);
  CHECK(resumed.exitStatus == 0);
  CHECK(count(resumed.stdoutText, "resumed from " + saved) == 1);
  CHECK(count(resumed.stdoutText, "epoch " + m[1].str() + "  train loss") == 1);
}

TEST_CASE("LeNet under mpirun: ranks started with another --batch-size, --limit or --seed stop, naming the flag",
          "[distributed]") {
  if (!mpiRunsHere()) return;
  nn::test::TempDir dir;
  prepare(dir);
  const std::vector<std::string> common{"--data-dir", dir.path(), "--epochs", "1", "--batch-size", "16"};
  // Other step counts died in MPI_ERR_TRUNCATE at the end of the epoch; equal ones trained on
  // shards that overlap, and exited 0.
  for (const auto& [flag, mine, theirs] : std::vector<std::array<std::string, 3>>{
           {"--batch-size", "16", "8"}, {"--limit", "200", "300"}, {"--seed", "1", "2"}}) {
    CAPTURE(flag);
    std::vector<std::string> first = common, second = common;
    first.insert(first.end(), {flag, mine});
    second.insert(second.end(), {flag, theirs});
    const nn::test::ExampleResult run = runCommand(mpirunEach(first, second));
    INFO(run.stdoutText << run.stderrText);
    CHECK(run.exitStatus != 0);
    CHECK(run.stderrText.find("rank 1's configuration differs from rank 0's") != std::string::npos);
    CHECK(run.stderrText.find("rank 0 has '" + flag + " " + mine + "' where rank 1 has '" + flag + " " + theirs +
                              "'") != std::string::npos);
    CHECK(run.stdoutText.find("epoch 1  train loss") == std::string::npos);
  }
}

TEST_CASE("LeNet under mpirun: a rank of another build, or with other training data, stops, naming the rank",
          "[distributed]") {
  if (!mpiRunsHere()) return;
  nn::test::TempDir dir;
  prepare(dir);
  const std::vector<std::string> common{"--data-dir", dir.path(), "--epochs", "1", "--batch-size", "16"};
  auto refused = [](const nn::test::ExampleResult& run, const std::string& line) {
    INFO(run.stdoutText << run.stderrText);
    CHECK(run.exitStatus != 0);
    CHECK(run.stderrText.find("rank 1's configuration differs from rank 0's") != std::string::npos);
    CHECK(std::regex_search(run.stderrText, std::regex("rank 0 has '" + line + "' where rank 1 has '" + line + "'")));
    CHECK(run.stdoutText.find("epoch 1  train loss") == std::string::npos);
  };

  // Another build: the same program with a byte more at the end of its file, which it does not run.
  const std::string other = dir.file("lenet-other");
  {
    std::ofstream copy(other, std::ios::binary);
    copy << nn::test::fileBytes("examples/lenet") << '\n';
  }
  REQUIRE(chmod(other.c_str(), 0755) == 0);
  refused(runCommand(mpirunEach(common, common, other)), "program file checksum [0-9a-f]{16}");

  // Other training data at the other rank's path: as many images, other pixels.
  nn::test::TempDir elsewhere;
  nn::test::writeSyntheticSplit(elsewhere, "train", 300, 7);
  nn::test::writeSyntheticSplit(elsewhere, "t10k", 50, 2);
  std::vector<std::string> second = common;
  second[1] = elsewhere.path();
  refused(runCommand(mpirunEach(common, second)), "training data checksum [0-9a-f]{16}");
}

TEST_CASE("LeNet under mpirun: an error rank 0 meets alone ends the job at once, not at the collectives' deadline",
          "[distributed]") {
  if (!mpiRunsHere()) return;
  nn::test::TempDir dir;
  prepare(dir);
  // Rank 0 alone writes files: its --save fails at the start, its --metrics at the first
  // epoch's end, while rank 1 waits in a collective (600 s before, rank 0 waiting in
  // MPI_Finalize for it).
  for (const std::vector<std::string>& flags : {std::vector<std::string>{"--save", dir.file("missing/x.safetensors")},
                                                std::vector<std::string>{"--metrics", "/dev/full"}}) {
    CAPTURE(flags[0]);
    std::vector<std::string> command = mpirun(2);
    command.insert(command.end(), {"--data-dir", dir.path(), "--epochs", "3", "--batch-size", "32"});
    command.insert(command.end(), flags.begin(), flags.end());
    const nn::test::ExampleResult run = runCommand(command, {}, 120);
    INFO(run.stdoutText << run.stderrText);
    CHECK(run.exitStatus != 0);
    CHECK(run.stderrText.find(flags[1]) != std::string::npos);
    CHECK(run.stdoutText.find("epoch 2  train loss") == std::string::npos);
  }
}

TEST_CASE("LeNet under mpirun: --accumulate sums the gradients once a step and trains as without it", "[distributed]") {
  if (!mpiRunsHere()) return;
  nn::test::TempDir dir;
  prepare(dir);
  const std::vector<std::string> common{"--data-dir", dir.path(), "--epochs", "2", "--batch-size", "32"};
  std::vector<std::string> plain = mpirun(2), accumulated = mpirun(2);
  plain.insert(plain.end(), common.begin(), common.end());
  accumulated.insert(accumulated.end(), common.begin(), common.end());
  accumulated.insert(accumulated.end(), {"--accumulate", "4"});
  const nn::test::ExampleResult a = runCommand(plain), b = runCommand(accumulated);
  INFO(a.stderrText << b.stderrText);
  REQUIRE(a.exitStatus == 0);
  REQUIRE(b.exitStatus == 0);
  for (int epoch : {1, 2}) {
    const auto [loss, accuracy] = epochLine(a.stdoutText, epoch);
    const auto [loss4, accuracy4] = epochLine(b.stdoutText, epoch);
    CHECK(loss4 == Approx(loss).epsilon(1e-3));
    CHECK(accuracy4 == Approx(accuracy).margin(0.021));
  }
}
